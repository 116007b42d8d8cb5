/**
 * What the dataset suites share: an RFC 8785 canonical form written here, apart from core's, so the hashes
 * the server answers are checked against an independent computation; cases by the thousand; and a dump of
 * every dataset table, to show that a refused request stored nothing.
 */
import { createHash } from "node:crypto";
import type { Store } from "../../src/store/index.js";

/**
 * RFC 8785 for the values cases hold (objects, arrays, strings, booleans, null; no numbers): keys sorted by
 * UTF-16 code units, strings as ECMAScript's JSON.stringify writes them, no whitespace.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number") throw new Error("no numbers in cases");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
}

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** A dataset version's hash: the SHA-256 of the canonical array of its (normal) cases. */
export const versionHash = (cases: unknown[]) => sha256(canonicalJson(cases));

/** A case's id. */
export const caseHash = (value: unknown) => sha256(canonicalJson(value));

/** `n` distinct cases, in their normal form (vars always; expected and tags on some). */
export function manyCases(n: number, from = 0): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      vars: { company: `Company ${i}`, question: `What is ${i} + ${i}?` },
      ...(i % 3 === 0 ? { expected: String(i + i) } : {}),
      ...(i % 5 === 0 ? { tags: ["arithmetic", `group-${i % 7}`].sort() } : {}),
    };
  });
}

/** Cases as a JSONL file: one canonical case per line. */
export const jsonl = (cases: unknown[]) => cases.map((c) => `${canonicalJson(c)}\n`).join("");

/** Every row of the dataset tables and the audit trail, sorted: equal before and after means nothing stored. */
export async function dumpDatasets(store: Store): Promise<string> {
  const tables = ["datasets", "dataset_versions", "dataset_cases", "dataset_version_cases", "audit_log"] as const;
  const out: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await store.db.selectFrom(table).selectAll().execute();
    out[table] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return JSON.stringify(out);
}
