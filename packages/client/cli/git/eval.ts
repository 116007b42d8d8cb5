import { readFile } from "node:fs/promises";
import { isLabelRef, PRODUCTION } from "@promptstore/core/labels";
import { HASH_OR_PREFIX } from "@promptstore/core/version-ref";
import type { PromptListItem } from "../../src/index.js";
import { CliError } from "../output.js";
import {
  ApiError,
  answerOf,
  connect,
  type RemoteOptions,
  remotePrompts,
  request,
  short,
  talking,
} from "./connection.js";
import { readDatasets } from "./dataset-file.js";
import { type RemoteDataset, remoteDatasets } from "./datasets.js";
import { type CaseOutcome, JUnitWriter } from "./junit.js";
import { readLock } from "./lockfile.js";
import { fileHash, versionContent } from "./prompt-file.js";
import { type LocalPrompt, readWorkspace } from "./workspace.js";

/**
 * `promptstore eval <dir>` (docs/git.md, "Evaluating in CI"): each prompt file that differs from the version it
 * is compared with is evaluated on the server as the draft it would be saved as, beside that version, over a
 * dataset with a check set; the label's required evaluation when it has one. Exit 0 when every threshold holds,
 * 1 when one fails, 2 on a usage or server error: the command's every other failure is a 2.
 */
export interface EvalOptions extends RemoteOptions {
  prompt?: string;
  against?: string;
  junit?: string;
  dataset?: string;
  checks?: string;
  connection?: string;
  model?: string;
  concurrency?: string;
  minPassRate?: string;
}

const usage = (message: string) => new CliError(message, 2);

/** A label's required evaluation as the server reads it out (docs/evaluations.md, "Required evaluations"). */
interface Requirement {
  dataset: string;
  dataset_version?: string | null;
  checks: unknown[];
  connection: string;
  model?: Record<string, unknown>;
  guard?: boolean;
  min_pass_rate: number;
  min_check_pass_rates?: Record<string, number>;
  no_regression?: boolean;
}

/** What an evaluation of one prompt is started with. */
interface Plan {
  id: string;
  file: string;
  local: LocalPrompt;
  /** The reference compared with (`production`, a label, a hash), or null: the draft is evaluated alone. */
  against: string | null;
  body: Record<string, unknown>;
  /** The dataset evaluated (`<id>` or `<id>@<version>`). */
  dataset: string;
  requirement: Requirement | undefined;
  /** The label whose required evaluation this is: started through its route, so that its gate counts it. */
  requiredBy: string | undefined;
  /** Where the dataset, checks and connection came from, for the report. */
  source: string;
}

interface Skipped {
  id: string;
  file: string;
  reason: string;
}

interface VersionSummary {
  ref: string;
  version: string;
  draft: boolean;
  passed: number;
  failed: number;
  errored: number;
  pending: number;
  pass_rate: number | null;
  scores: Record<string, number | null>;
}

interface EvaluationView {
  id: string;
  status: "running" | "done" | "failed" | "stopped";
  reused: boolean;
  reused_from: string | null;
  dataset: { id: string; version: string; cases: number };
  check_names: string[];
  progress: { done: number; total: number };
  versions: VersionSummary[];
  compare: { regressions: number; improvements: number } | null;
  reason: string | null;
}

interface Verdict {
  name: string;
  pass: boolean | null;
  score: number | null;
  reason: string;
}

interface Cell {
  version: string;
  state: "passed" | "failed" | "errored" | "pending";
  answer: { content: string | null; tool_calls?: unknown[] } | null;
  verdicts: Verdict[];
  error: { code: string; message: string } | null;
  latency_ms: number | null;
}

interface CaseResult {
  position: number;
  case_id: string;
  case: { vars: Record<string, string>; messages?: unknown[]; expected?: string; tags?: string[] };
  class: string;
  results: Cell[];
}

/** Per version: how many cases each check passed, of the cases judged. */
interface CheckTally {
  judged: number;
  passes: Record<string, number>;
}

export interface Threshold {
  name: string;
  required: string;
  actual: string;
  ok: boolean;
}

export interface PromptEvaluation {
  id: string;
  file: string;
  evaluation: string;
  status: string;
  reused: boolean;
  against: { ref: string; version: string } | null;
  draft: string;
  dataset: { id: string; name: string | null; version: string; cases: number };
  source: string;
  versions: {
    ref: string;
    version: string;
    passed: number;
    failed: number;
    errored: number;
    pending: number;
    pass_rate: number | null;
    checks: Record<string, { passed: number; judged: number }>;
  }[];
  regressions: number;
  /** The first regressions (at most 20), in dataset order. */
  regression_cases: { position: number; vars: Record<string, string>; reasons: string[] }[];
  thresholds: Threshold[];
  ok: boolean;
}

export interface EvalReport {
  ok: boolean;
  prompts: PromptEvaluation[];
  skipped: Skipped[];
}

const SHOWN_REGRESSIONS = 20;

function parseOptions(options: EvalOptions) {
  let concurrency: number | undefined;
  if (options.concurrency !== undefined) {
    concurrency = Number(options.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32) {
      throw usage("--concurrency: must be a whole number from 1 to 32");
    }
  }
  let minPassRate: number | undefined;
  if (options.minPassRate !== undefined) {
    minPassRate = Number(options.minPassRate);
    if (options.minPassRate.trim() === "" || !Number.isFinite(minPassRate) || minPassRate < 0 || minPassRate > 1) {
      throw usage("--min-pass-rate: must be a number from 0 to 1 (0.95 is 95%)");
    }
  }
  const against = options.against ?? PRODUCTION;
  const isHash = HASH_OR_PREFIX.test(against);
  if (!isHash && against !== "latest" && !isLabelRef(against)) {
    throw usage(`--against: ${JSON.stringify(against)} is not production, latest, a label or a version hash`);
  }
  if (isHash && options.prompt === undefined) {
    throw usage("--against <hash>: a version hash belongs to one prompt; name it with --prompt <id>");
  }
  return { concurrency, minPassRate, against, isHash };
}

async function readChecks(file: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw usage(
      `--checks ${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw usage(`--checks ${file}: is not valid JSON`);
  }
  // A check set as a list, or as the evaluation-defaults' answer holds one: { "checks": [...] }.
  const checks = Array.isArray(parsed) ? parsed : (parsed as { checks?: unknown } | null)?.checks;
  if (!Array.isArray(checks) || checks.length === 0) {
    throw usage(`--checks ${file}: must hold a list of checks ([{ "type": "contains", "value": "…" }, …])`);
  }
  return checks;
}

/** A label's settings over REST: its required evaluation, if it has one (404: no such route or label). */
async function requirementOf(label: string, options: RemoteOptions): Promise<Requirement | undefined> {
  const path = `/api/v2/labels/${encodeURIComponent(label)}`;
  const response = await request(options, "GET", path);
  if (response.status === 404) {
    await response.arrayBuffer();
    return undefined;
  }
  const data = (await answerOf(response, "GET", path)) as { required_evaluation?: Requirement | null };
  return data.required_evaluation ?? undefined;
}

/** A prompt's default check set and dataset (docs/evaluations.md, "Default checks"); none on a 404. */
async function defaultsOf(
  id: string,
  options: RemoteOptions,
): Promise<{ checks: unknown[] | null; dataset: string | null }> {
  const path = `/api/v2/prompts/${encodeURIComponent(id)}/evaluation-defaults`;
  const response = await request(options, "GET", path);
  if (response.status === 404) {
    await response.arrayBuffer();
    return { checks: null, dataset: null };
  }
  const data = (await answerOf(response, "GET", path)) as { checks?: unknown[] | null; dataset?: string | null };
  return { checks: data.checks ?? null, dataset: data.dataset ?? null };
}

/** `--dataset`: an id (`ds_…`, optionally `@<version>`) or a dataset's name (also `name@<version>`). */
function resolveDataset(ref: string, datasets: RemoteDataset[]): string {
  if (/^ds_[0-9a-f]{24}(@[0-9a-f]{7,64})?$/.test(ref)) return ref;
  const at = ref.lastIndexOf("@");
  const version = at > 0 && /^[0-9a-f]{7,64}$/.test(ref.slice(at + 1)) ? ref.slice(at + 1) : undefined;
  const name = version === undefined ? ref : ref.slice(0, at);
  const found = datasets.find((d) => d.name === name);
  if (!found) {
    throw usage(`--dataset: no dataset named ${JSON.stringify(name)} in the key's project (nor is it a ds_… id)`);
  }
  return version === undefined ? found.id : `${found.id}@${version}`;
}

/** The version a prompt's `against` names, as the listing says; undefined when only the server can tell. */
function againstVersion(remote: PromptListItem, against: string): string | null | undefined {
  if (against === PRODUCTION) return remote.production_version;
  if (against === "latest") return remote.latest_version;
  return (remote.labels as Record<string, string> | undefined)?.[against];
}

/**
 * Decides what to evaluate, refusing everything that can be refused before anything starts: each prompt file
 * (or `--prompt`), against its version, with the requirement's or the defaults' or the flags' settings.
 */
async function plan(
  dir: string,
  options: EvalOptions,
): Promise<{ plans: Plan[]; skipped: Skipped[]; datasets: RemoteDataset[] }> {
  const parsed = parseOptions(options);
  // The lockfile's pins: a file with includes hashes as the version it was pulled from.
  const local = await readWorkspace(dir, await readLock(dir));
  if (local.size === 0) throw usage(`${dir} holds no prompt files (*.md with front matter)`);
  if (options.prompt !== undefined && !local.has(options.prompt)) {
    throw usage(`--prompt: no prompt file in ${dir} has the id ${JSON.stringify(options.prompt)}`);
  }
  const client = connect(options);
  const remote = await talking(() => remotePrompts(client));
  const datasets = await remoteDatasets(options);
  const label = parsed.isHash || parsed.against === "latest" ? undefined : parsed.against;
  const requirement = label === undefined ? undefined : await requirementOf(label, options);
  // The flags are read only when they are used: a requirement names its own.
  const flagChecks = requirement || options.checks === undefined ? undefined : await readChecks(options.checks);
  const flagDataset =
    requirement || options.dataset === undefined ? undefined : resolveDataset(options.dataset, datasets);
  if (requirement) {
    const given = (["dataset", "checks", "connection", "model", "minPassRate"] as const).filter(
      (k) => options[k] !== undefined,
    );
    if (given.length > 0) {
      process.stderr.write(
        `note: ${label} has a required evaluation: its dataset, checks, connection, model and thresholds are used; ${given.map((g) => `--${g === "minPassRate" ? "min-pass-rate" : g}`).join(", ")} ignored\n`,
      );
    }
  }
  const plans: Plan[] = [];
  const skipped: Skipped[] = [];
  const missing: string[] = [];
  for (const prompt of local.values()) {
    const { id, file } = { id: prompt.prompt.id, file: prompt.file };
    if (options.prompt !== undefined && id !== options.prompt) continue;
    const server = remote.get(id);
    if (!server) {
      skipped.push({ id, file, reason: "not on the server yet: push creates it, then it can be evaluated" });
      continue;
    }
    const hash = fileHash(prompt.prompt);
    let against: string | null = parsed.against;
    const version = parsed.isHash ? null : againstVersion(server, parsed.against);
    if (parsed.isHash) {
      if (hash.startsWith(parsed.against)) {
        skipped.push({ id, file, reason: `unchanged: the file is ${short(hash)}` });
        continue;
      }
    } else if (version === hash) {
      skipped.push({ id, file, reason: `unchanged: the file is ${parsed.against}'s version ${short(hash)}` });
      continue;
    } else if (version === null && parsed.against === PRODUCTION) {
      // Never published: nothing to compare with, so the draft is evaluated alone (no regressions).
      against = null;
    }
    let body: Record<string, unknown>;
    let source: string;
    if (requirement) {
      const datasetId = requirement.dataset.split("@")[0] as string;
      body = {
        dataset: requirement.dataset_version ? `${datasetId}@${requirement.dataset_version}` : requirement.dataset,
        checks: requirement.checks,
        connection: requirement.connection,
        ...(requirement.model !== undefined ? { model: requirement.model } : {}),
        ...(requirement.guard !== undefined ? { guard: requirement.guard } : {}),
      };
      source = `${label}'s required evaluation`;
    } else {
      const defaults = flagChecks && flagDataset ? { checks: null, dataset: null } : await defaultsOf(id, options);
      const checks = flagChecks ?? defaults.checks;
      const dataset = flagDataset ?? defaults.dataset;
      const lacking = [
        ...(dataset ? [] : ["a dataset (--dataset, or the prompt's default dataset)"]),
        ...(checks ? [] : ["checks (--checks FILE, or the prompt's default checks)"]),
        ...(options.connection ? [] : ["a connection (--connection con_…)"]),
      ];
      if (lacking.length > 0) {
        missing.push(`${id} (${file}): needs ${lacking.join(", ")}`);
        continue;
      }
      body = {
        dataset,
        checks,
        connection: options.connection,
        ...(options.model !== undefined ? { model: { name: options.model } } : {}),
      };
      source =
        flagChecks && flagDataset
          ? "the flags"
          : flagChecks || flagDataset
            ? "the flags and the prompt's defaults"
            : "the prompt's defaults";
    }
    // The lockfile's pins go with it, as a push sends them: the draft is what a push would save.
    const pins = prompt.prompt.pins;
    const draft = {
      draft: { ...versionContent(prompt.prompt), ...(pins && Object.keys(pins).length > 0 ? { includes: pins } : {}) },
    };
    const dataset = String(body.dataset);
    if (requirement && label !== undefined) {
      // The label's own route runs it (POST …/labels/<label>/evaluations): the server compares with what the
      // label serves when the requirement asks for no regression, and tags it so that the label's gate counts it.
      if (!requirement.no_regression) against = null;
      body = draft;
    } else {
      body = {
        versions: against === null ? [draft] : [against, draft],
        ...body,
        ...(parsed.concurrency !== undefined ? { concurrency: parsed.concurrency } : {}),
      };
    }
    plans.push({
      id,
      file,
      local: prompt,
      against,
      body,
      dataset,
      requirement,
      requiredBy: requirement ? label : undefined,
      source,
    });
  }
  if (missing.length > 0) {
    throw usage(
      `nothing was started: ${missing.join("; ")}. ${label ? `${label} has no required evaluation; ` : ""}see promptstore eval --help`,
    );
  }
  await warnAboutLocalDatasets(dir, datasets, plans);
  return { plans, skipped, datasets };
}

/** A dataset file edited but not pushed is not what the server evaluates with: say so. */
async function warnAboutLocalDatasets(dir: string, datasets: RemoteDataset[], plans: Plan[]): Promise<void> {
  if (plans.length === 0) return;
  const lock = await readLock(dir);
  const local = await readDatasets(dir);
  // Each dataset evaluated, with the version evaluated: a pinned one (`@<version>`), or the head.
  const used = new Map<string, string | undefined>();
  for (const p of plans) {
    const [id, version] = p.dataset.split("@");
    used.set(id as string, version);
  }
  for (const [name, file] of local) {
    const server = datasets.find((d) => d.id === lock.datasets.get(name)?.id) ?? datasets.find((d) => d.name === name);
    if (!server || !used.has(server.id)) continue;
    const evaluated = used.get(server.id) ?? server.version;
    if (file.version.startsWith(evaluated)) continue;
    process.stderr.write(
      `note: ${file.file} is not the server's ${JSON.stringify(server.name)} evaluated (${short(evaluated)}): the evaluation uses the server's; push the file to evaluate with its cases\n`,
    );
  }
}

async function startEvaluation(plan: Plan, options: RemoteOptions): Promise<EvaluationView> {
  const prompt = `/api/v2/prompts/${encodeURIComponent(plan.id)}`;
  const path =
    plan.requiredBy === undefined
      ? `${prompt}/evaluations`
      : `${prompt}/labels/${encodeURIComponent(plan.requiredBy)}/evaluations`;
  try {
    return (await answerOf(
      await request(options, "POST", path, { body: JSON.stringify(plan.body), contentType: "application/json" }),
      "POST",
      path,
    )) as EvaluationView;
  } catch (error) {
    if (error instanceof ApiError) {
      throw new CliError(
        `${plan.id} (${plan.file}): the server refused the evaluation: ${error.status} ${error.serverMessage}`,
        2,
      );
    }
    throw error;
  }
}

async function readEvaluation(id: string, options: RemoteOptions): Promise<EvaluationView> {
  const path = `/api/v2/evaluations/${id}?limit=1`;
  return (await answerOf(await request(options, "GET", path), "GET", path)) as EvaluationView;
}

/** Waits for every evaluation, reading each once a second; one progress line on stderr. */
async function waitForAll(views: Map<string, EvaluationView>, names: Map<string, string>, options: RemoteOptions) {
  const tty = process.stderr.isTTY === true;
  let lastLine = "";
  let lastPrinted = 0;
  for (;;) {
    const running = [...views.values()].filter((v) => v.status === "running");
    if (running.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const view of running) views.set(view.id, await readEvaluation(view.id, options));
    const line = `eval: ${[...views.values()].map((v) => `${names.get(v.id)} ${v.progress.done}/${v.progress.total}${v.status === "running" ? "" : ` ${v.status}`}`).join(", ")}`;
    const now = Date.now();
    if (tty) {
      process.stderr.write(`\r${line}\u001b[K`);
    } else if (line !== lastLine && now - lastPrinted >= 2000) {
      process.stderr.write(`${line}\n`);
      lastPrinted = now;
    }
    lastLine = line;
  }
  if (tty && lastLine !== "") process.stderr.write("\n");
}

/** Every case of an evaluation, a page at a time. */
async function* casesOf(id: string, options: RemoteOptions): AsyncGenerator<CaseResult> {
  let after: number | null = -1;
  while (after !== null) {
    const path = `/api/v2/evaluations/${id}/cases?limit=200&after=${after}`;
    const page = (await answerOf(await request(options, "GET", path), "GET", path)) as {
      items: CaseResult[];
      next: number | null;
    };
    yield* page.items;
    after = page.items.length === 0 ? null : page.next;
  }
}

const caseTitle = (c: CaseResult): string => {
  const vars = JSON.stringify(c.case.vars);
  return `#${c.position} ${vars.length > 120 ? `${vars.slice(0, 117)}...` : vars}`;
};

const clip = (text: string, max = 4000) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;

/** What the draft's cell says, as JUnit reads it. */
function outcomeOf(cell: Cell | undefined, regression: boolean, againstRef: string | null): CaseOutcome {
  if (!cell || cell.state === "pending") return { kind: "skipped", message: "not judged: the evaluation was stopped" };
  if (cell.state === "passed") return { kind: "passed" };
  const answer =
    cell.answer === null
      ? ""
      : `\n\nanswer:\n${clip(cell.answer.content ?? JSON.stringify(cell.answer.tool_calls ?? []))}`;
  if (cell.state === "errored") {
    const undecided = cell.verdicts.filter((v) => v.pass === null);
    const message = cell.error ? cell.error.message : undecided.map((v) => `${v.name}: ${v.reason}`).join("; ");
    return {
      kind: "errored",
      message: clip(message, 1000),
      type: cell.error ? cell.error.code : "check_error",
      details: `${cell.error ? message : undecided.map((v) => `${v.name}: ${v.reason}`).join("\n")}${answer}`,
    };
  }
  const failing = cell.verdicts.filter((v) => v.pass === false);
  const lines = failing.map((v) => `${v.name}: ${v.reason}`);
  return {
    kind: "failed",
    message: clip(`${regression ? `regression (passes on ${againstRef}): ` : ""}${lines.join("; ")}`, 1000),
    type: regression ? "regression" : "failed",
    details: `${lines.join("\n")}${answer}`,
  };
}

const rate = (n: number | null) => (n === null ? "none" : String(Math.round(n * 10000) / 10000));

function thresholdsOf(
  plan: Plan,
  draft: VersionSummary,
  tally: CheckTally,
  regressions: number,
  minPassRate: number | undefined,
): Threshold[] {
  const judged = draft.passed + draft.failed + draft.errored;
  const requirement = plan.requirement;
  if (!requirement) {
    if (minPassRate !== undefined) {
      return [
        {
          name: "pass rate",
          required: `>= ${minPassRate}`,
          actual: rate(draft.pass_rate),
          ok: draft.pending === 0 && draft.pass_rate !== null && draft.pass_rate >= minPassRate,
        },
      ];
    }
    const total = judged + draft.pending;
    return [
      {
        name: "every case passes",
        required: `${total}/${total}`,
        actual: `${draft.passed}/${total}`,
        ok: draft.passed === total,
      },
    ];
  }
  const out: Threshold[] = [
    {
      name: "pass rate",
      required: `>= ${requirement.min_pass_rate}`,
      actual: rate(draft.pass_rate),
      ok: draft.pending === 0 && draft.pass_rate !== null && draft.pass_rate >= requirement.min_pass_rate,
    },
  ];
  for (const [name, min] of Object.entries(requirement.min_check_pass_rates ?? {})) {
    const passes = tally.passes[name];
    const actual = passes === undefined || judged === 0 ? null : passes / judged;
    out.push({
      name: `check ${JSON.stringify(name)}`,
      required: `>= ${min}`,
      actual: passes === undefined ? "no such check" : rate(actual),
      ok: actual !== null && actual >= min,
    });
  }
  if (requirement.no_regression && plan.against !== null) {
    out.push({ name: "no regression", required: "0", actual: String(regressions), ok: regressions === 0 });
  }
  return out;
}

/** Evaluates, waits, reads every case once (the JUnit file and the per-check tallies), and decides. */
export async function evaluate(dir: string, options: EvalOptions): Promise<EvalReport> {
  const { minPassRate } = parseOptions(options);
  const { plans, skipped, datasets } = await plan(dir, options);
  const junit = options.junit === undefined ? undefined : new JUnitWriter(options.junit);
  try {
    const views = new Map<string, EvaluationView>();
    const names = new Map<string, string>();
    const started: { plan: Plan; id: string }[] = [];
    for (const p of plans) {
      const view = await startEvaluation(p, options);
      views.set(view.id, view);
      names.set(view.id, p.id);
      started.push({ plan: p, id: view.id });
    }
    await waitForAll(views, names, options);
    const results: PromptEvaluation[] = [];
    for (const { plan: p, id } of started) {
      const view = views.get(id) as EvaluationView;
      if (view.status !== "done") {
        throw new CliError(
          `${p.id} (${p.file}): evaluation ${id} ended ${view.status}${view.reason ? `: ${view.reason}` : ""}`,
          2,
        );
      }
      results.push(await collect(p, view, datasets, junit, minPassRate, options));
    }
    await junit?.finish();
    return { ok: results.every((r) => r.ok), prompts: results, skipped };
  } catch (error) {
    await junit?.abort();
    throw error;
  }
}

async function collect(
  p: Plan,
  view: EvaluationView,
  datasets: RemoteDataset[],
  junit: JUnitWriter | undefined,
  minPassRate: number | undefined,
  options: RemoteOptions,
): Promise<PromptEvaluation> {
  const draft = view.versions.find((v) => v.draft) ?? (view.versions[view.versions.length - 1] as VersionSummary);
  const base = p.against === null ? undefined : view.versions[0];
  const tallies = new Map<string, CheckTally>(
    view.versions.map((v) => [
      v.version,
      { judged: 0, passes: Object.fromEntries(view.check_names.map((n) => [n, 0])) },
    ]),
  );
  const shown: PromptEvaluation["regression_cases"] = [];
  const datasetName = datasets.find((d) => d.id === view.dataset.id)?.name ?? null;
  await junit?.startSuite({
    name: p.id,
    timestamp: new Date().toISOString().slice(0, 19),
    properties: {
      file: p.file,
      evaluation: view.id,
      version: draft.version,
      ...(base ? { against: `${p.against} ${base.version}` } : {}),
      dataset: `${datasetName ?? view.dataset.id}@${view.dataset.version}`,
      reused: String(view.reused),
    },
  });
  for await (const c of casesOf(view.id, options)) {
    for (const cell of c.results) {
      const tally = tallies.get(cell.version);
      if (!tally || cell.state === "pending") continue;
      tally.judged++;
      for (const v of cell.verdicts) if (v.pass === true) tally.passes[v.name] = (tally.passes[v.name] ?? 0) + 1;
    }
    const cell = c.results.find((r) => r.version === draft.version);
    const regression = c.class === "regression";
    if (regression && shown.length < SHOWN_REGRESSIONS) {
      shown.push({
        position: c.position,
        vars: c.case.vars,
        reasons: (cell?.verdicts ?? [])
          .filter((v) => v.pass !== true)
          .map((v) => `${v.name}: ${v.reason}`)
          .concat(cell?.error ? [`${cell.error.code}: ${cell.error.message}`] : []),
      });
    }
    await junit?.addCase(
      caseTitle(c),
      `promptstore.${p.id}`,
      cell?.latency_ms ?? null,
      outcomeOf(cell, regression, p.against),
    );
  }
  const regressions = base ? (view.compare?.regressions ?? 0) : 0;
  const thresholds = thresholdsOf(p, draft, tallies.get(draft.version) as CheckTally, regressions, minPassRate);
  return {
    id: p.id,
    file: p.file,
    evaluation: view.id,
    status: view.status,
    reused: view.reused,
    against: base ? { ref: p.against as string, version: base.version } : null,
    draft: draft.version,
    dataset: { id: view.dataset.id, name: datasetName, version: view.dataset.version, cases: view.dataset.cases },
    source: p.source,
    versions: view.versions.map((v) => {
      const tally = tallies.get(v.version) as CheckTally;
      return {
        ref: v.draft ? "draft" : v.ref,
        version: v.version,
        passed: v.passed,
        failed: v.failed,
        errored: v.errored,
        pending: v.pending,
        pass_rate: v.pass_rate,
        checks: Object.fromEntries(
          view.check_names.map((n) => [n, { passed: tally.passes[n] ?? 0, judged: tally.judged }]),
        ),
      };
    }),
    regressions,
    regression_cases: shown,
    thresholds,
    ok: thresholds.every((t) => t.ok),
  };
}

// ---- the report

const percent = (n: number, of: number) => (of === 0 ? "  -" : `${Math.round((n / of) * 100)}%`.padStart(4));

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows.map((r) =>
    `  ${r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("   ")}`.trimEnd(),
  );
}

export function describeEval(report: EvalReport): string {
  const lines: string[] = [];
  for (const r of report.prompts) {
    const against = r.against
      ? `against ${r.against.ref} ${short(r.against.version)}`
      : "alone (nothing to compare with)";
    lines.push(`${r.file} (${r.id}): draft ${short(r.draft)} ${against}`);
    lines.push(
      `  dataset ${r.dataset.name ?? r.dataset.id} ${short(r.dataset.version)} (${r.dataset.cases} cases), settings from ${r.source}; evaluation ${r.evaluation}${r.reused ? " (reused: nothing was sent to the model)" : ""}`,
    );
    const judged = (v: PromptEvaluation["versions"][number]) => v.passed + v.failed + v.errored;
    const rows: string[][] = [["", ...r.versions.map((v) => (v.ref === "draft" ? "draft" : v.ref))]];
    rows.push(["pass rate", ...r.versions.map((v) => `${v.passed}/${judged(v)} ${percent(v.passed, judged(v))}`)]);
    for (const name of Object.keys(r.versions[0]?.checks ?? {})) {
      rows.push([
        `  ${name}`,
        ...r.versions.map((v) => {
          const c = v.checks[name] as { passed: number; judged: number };
          return `${c.passed}/${c.judged} ${percent(c.passed, c.judged)}`;
        }),
      ]);
    }
    rows.push(["errored", ...r.versions.map((v) => String(v.errored))]);
    if (r.versions.some((v) => v.pending > 0)) rows.push(["not judged", ...r.versions.map((v) => String(v.pending))]);
    lines.push(...table(rows));
    if (r.against) {
      lines.push(`  regressions: ${r.regressions} (cases that pass on ${r.against.ref} and fail on the draft)`);
      for (const c of r.regression_cases) {
        const vars = JSON.stringify(c.vars);
        lines.push(
          `    #${c.position} ${vars.length > 60 ? `${vars.slice(0, 57)}...` : vars}: ${c.reasons.join("; ").slice(0, 200)}`,
        );
      }
      if (r.regressions > r.regression_cases.length)
        lines.push(`    … and ${r.regressions - r.regression_cases.length} more`);
    }
    for (const t of r.thresholds) {
      lines.push(`  ${t.ok ? "ok  " : "FAIL"}  ${t.name}: ${t.actual} (needs ${t.required})`);
    }
    lines.push("");
  }
  for (const s of report.skipped) lines.push(`not evaluated: ${s.file} (${s.id}): ${s.reason}`);
  const failed = report.prompts.filter((r) => !r.ok).length;
  lines.push(
    report.prompts.length === 0
      ? "nothing to evaluate"
      : `${report.prompts.length} prompt(s) evaluated: ${report.prompts.length - failed} passed, ${failed} failed`,
  );
  return lines.join("\n");
}
