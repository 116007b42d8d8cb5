import type { Handler } from "./args.js";
import { api, connect, type RemoteOptions, short, talking } from "./git/connection.js";
import { CliError, emit } from "./output.js";

/** A release request as the API answers it (docs/releases.md). */
interface Release {
  id: string;
  prompt_id: string;
  status: string;
  label: string;
  version: string;
  from_version: string | null;
  percent: number | null;
  message: string;
  requested_by: string;
}

const percentOf = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const percent = Number(value);
  if (!Number.isInteger(percent) || percent < 1 || percent > 100) {
    throw new CliError("percent: must be a whole number from 1 to 100");
  }
  return percent;
};

const releaseLine = (r: Release) =>
  `${r.id}  ${r.status}  ${r.prompt_id}:${r.label} → ${short(r.version)}` +
  `${r.percent === null ? "" : ` at ${r.percent}%`}  by ${r.requested_by}`;

const path = (...parts: string[]) => parts.map(encodeURIComponent).join("/");

/**
 * Labels and release requests through a key (docs/releases.md): what a key may do, the server decides (a
 * `publish` key moves and removes labels and asks for releases; a protected label answers 403 naming the
 * release path). Deciding a request is a person's, in the dashboard. Settings of labels (protection,
 * fallback) are an owner's: the dashboard, or the server's own `promptstore label set`.
 */
export const LABEL_COMMANDS: Record<string, Handler> = {
  async move([prompt, label, version], opts: RemoteOptions & { percent?: string }) {
    const percent = percentOf(opts.percent);
    const client = connect(opts);
    const moved = await talking(() =>
      client.publish(prompt as string, version, { label: label as string, ...(percent && { percent }) }),
    );
    client.close();
    emit(!!opts.json, moved, () =>
      moved.rollout
        ? `${moved.id}:${moved.label} rolls out ${short(moved.rollout.candidate)} to ${moved.rollout.percent}%`
        : `${moved.id}:${moved.label} → ${short(moved.version)}`,
    );
  },

  async remove([prompt, label], opts: RemoteOptions) {
    const client = connect(opts);
    const removed = await talking(() => client.removeLabel(prompt as string, label as string));
    client.close();
    emit(!!opts.json, removed, () => `${removed.id}: ${removed.label} removed`);
  },

  async request([prompt, label, version], opts: RemoteOptions & { percent?: string; message?: string }) {
    const percent = percentOf(opts.percent);
    connect(opts).close(); // the same errors as every command when --url or --key is missing
    const body = {
      label,
      version,
      ...(percent && { percent }),
      ...(opts.message !== undefined && { message: opts.message }),
    };
    const asked = (await api(opts, "POST", `/api/v2/prompts/${path(prompt as string)}/releases`, body)) as Release;
    emit(
      !!opts.json,
      asked,
      () =>
        `${asked.id}  pending: ${asked.prompt_id}:${asked.label} → ${short(asked.version)}; someone else approves it under Releases in the dashboard`,
    );
  },

  async list(_, opts: RemoteOptions & { status?: string }) {
    connect(opts).close();
    const query = opts.status === undefined ? "" : `?status=${encodeURIComponent(opts.status)}`;
    const { releases } = (await api(opts, "GET", `/api/v2/releases${query}`)) as { releases: Release[] };
    emit(!!opts.json, { releases }, () =>
      releases.length === 0 ? "no release requests" : releases.map(releaseLine).join("\n"),
    );
  },

  async show([id], opts: RemoteOptions) {
    connect(opts).close();
    const release = (await api(opts, "GET", `/api/v2/releases/${path(id as string)}`)) as Release;
    emit(!!opts.json, release, () =>
      [
        releaseLine(release),
        `from ${short(release.from_version)}${release.message ? `: ${release.message}` : ""}`,
      ].join("\n"),
    );
  },
};
