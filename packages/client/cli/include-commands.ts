import type { Handler } from "./args.js";
import { ApiError, api, connect, type RemoteOptions, short } from "./git/connection.js";
import { CliError, emit } from "./output.js";

/** One prompt's update as the API answers it (docs/includes.md, "Updating on purpose"). */
export interface IncludesUpdate {
  id: string;
  from_version: string;
  version: string;
  created: boolean;
  updated: { include: string; from: string; to: string }[];
  outcome: "saved" | "published" | "release_requested" | "blocked";
  label: string | null;
  release?: { id: string };
  reason?: string;
}

/** A prompt the update from a piece could not update, answered beside the others. */
interface Refused {
  id: string;
  error: string;
  status: number;
}

type Options = RemoteOptions & {
  from?: string;
  only?: string;
  prompts?: string;
  label?: string;
  version?: string;
  publish?: boolean;
  message?: string;
};

/** `a,b` as prompt ids; empty entries are a mistake named by the option. */
function ids(option: string, value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const list = value.split(",").map((s) => s.trim());
  if (list.some((id) => id === "")) throw new CliError(`--${option}: give prompt ids separated by commas (a,b)`);
  return list;
}

/** `support: safety 3f2a9c1b2c3d → 9b8c7d6e5f4a, saved 1a2b3c4d5e6f, published` */
export function describeUpdate(u: IncludesUpdate): string {
  if (u.updated.length === 0 && !u.created) {
    const published = u.outcome === "saved" ? "" : `, ${outcomeText(u)}`;
    return `${u.id}: includes up to date at ${short(u.version)}${published}`;
  }
  const moved = u.updated.map((m) => `${m.include} ${short(m.from)} → ${short(m.to)}`).join(", ") || "no pin moved";
  const version = u.created ? `saved ${short(u.version)}` : `${short(u.version)} existed already`;
  return `${u.id}: ${moved}, ${version}${u.outcome === "saved" ? "" : `, ${outcomeText(u)}`}`;
}

function outcomeText(u: IncludesUpdate): string {
  const label = u.label === null || u.label === "production" ? "" : ` ${u.label}`;
  if (u.outcome === "published") return `published${label}`;
  if (u.outcome === "release_requested") return `release requested${label} (${u.release?.id ?? "pending"})`;
  if (u.outcome === "blocked") return `not published${label}: ${u.reason ?? "its required evaluation has not passed"}`;
  return "saved";
}

const path = (id: string) => encodeURIComponent(id);

/** The API's refusal as one line naming the prompt and the server's words. */
function refusal(prompt: string, error: unknown): never {
  if (error instanceof ApiError) throw new CliError(`${prompt}: ${error.serverMessage} (${error.status})`);
  throw error;
}

/**
 * `promptstore update-includes` (docs/includes.md, "Updating on purpose"): one prompt's includes re-pinned to
 * what they name now, or, `--from` a piece, every chosen prompt that includes it. Each is saved (and published
 * when asked, where allowed) by the server as any change; this prints what moved and the outcome per prompt,
 * and exits 1 when the server refuses one, or when publishing was asked and its label's required evaluation
 * held it back.
 */
export const INCLUDE_COMMANDS: Record<string, Handler> = {
  async update([prompt], opts: Options) {
    if ((prompt === undefined) === (opts.from === undefined)) {
      throw new CliError(
        "update-includes needs either a prompt (update its includes) or --from <piece> (update the prompts that include it)",
      );
    }
    connect(opts).close(); // the same errors as every command when --url or --key is missing
    const common = {
      ...(opts.label !== undefined && { label: opts.label }),
      ...(opts.publish && { publish: true }),
      ...(opts.message !== undefined && { message: opts.message }),
    };
    let results: (IncludesUpdate | Refused)[];
    let answer: unknown;
    if (prompt !== undefined) {
      if (opts.prompts !== undefined) throw new CliError("--prompts goes with --from; for one prompt, use --only");
      const only = ids("only", opts.only);
      const body = { ...(only && { only }), ...(opts.version !== undefined && { version: opts.version }), ...common };
      const one = (await api(opts, "POST", `/api/v2/prompts/${path(prompt)}/update-includes`, body).catch((e) =>
        refusal(prompt, e),
      )) as IncludesUpdate;
      results = [one];
      answer = one;
    } else {
      const from = opts.from as string;
      if (opts.only !== undefined) throw new CliError("--only goes with a prompt; from a piece, use --prompts");
      if (opts.version !== undefined) throw new CliError("--version goes with a prompt, not with --from");
      const prompts = ids("prompts", opts.prompts);
      const body = { ...(prompts && { prompts }), ...common };
      const all = (await api(opts, "POST", `/api/v2/prompts/${path(from)}/included-by/update`, body).catch((e) =>
        refusal(from, e),
      )) as { id: string; results: (IncludesUpdate | Refused)[] };
      results = all.results;
      answer = all;
    }
    emit(!!opts.json, answer, () =>
      results.length === 0
        ? `no prompt that includes ${opts.from} is behind`
        : results
            .map((r) => ("error" in r ? `${r.id}: refused (${r.status}): ${r.error}` : describeUpdate(r)))
            .join("\n"),
    );
    const refused = results.filter((r) => "error" in r);
    const blocked = results.filter((r) => !("error" in r) && r.outcome === "blocked");
    if (refused.length > 0) {
      throw new CliError(`refused for ${refused.map((r) => r.id).join(", ")}`);
    }
    if (blocked.length > 0) {
      throw new CliError(`saved, but not published (a required evaluation): ${blocked.map((r) => r.id).join(", ")}`);
    }
  },
};
