import type { VersionList } from "@promptstore/core/views";
import { shortHash } from "../ui/format";
import type { Target } from "./run-types";

export interface TargetOption {
  value: string;
  label: string;
}

export const DRAFT = "draft";

export const targetValue = (t: Target): string => (t.kind === "draft" ? DRAFT : t.ref);
export const targetFrom = (value: string): Target =>
  value === DRAFT ? { kind: "draft" } : { kind: "ref", ref: value };

/** What can run, in the order a person looks for it: the draft, the labels, then every version. */
export function targetOptions(
  list: VersionList,
  hasDraft: boolean,
): { pointers: TargetOption[]; versions: TargetOption[] } {
  const pointers: TargetOption[] = [];
  if (hasDraft) pointers.push({ value: DRAFT, label: "This draft (unsaved)" });
  if (list.production_version) {
    pointers.push({ value: "production", label: `production (${shortHash(list.production_version)})` });
  }
  pointers.push({ value: "latest", label: `latest (${shortHash(list.latest_version)})` });
  for (const [name, hash] of Object.entries(list.labels ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (name !== "production") pointers.push({ value: name, label: `${name} (${shortHash(hash)})` });
  }
  const versions = list.versions.map((v) => ({
    value: v.version,
    label: `${shortHash(v.version)} — ${v.message ?? "no message"}`,
  }));
  return { pointers, versions };
}

/** The side's heading: "This draft", "production", "version 1a2b3c4". */
export function targetTitle(t: Target): string {
  if (t.kind === "draft") return "This draft";
  return /^[0-9a-f]{7,64}$/.test(t.ref) ? `version ${shortHash(t.ref)}` : t.ref;
}
