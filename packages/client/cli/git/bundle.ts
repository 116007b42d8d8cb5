import { readFile, rename } from "node:fs/promises";
import { exportedExample, exportedResult } from "@promptstore/core/playground";
import { contentHash } from "@promptstore/core/prompts/hash";
import { parseInclude } from "@promptstore/core/prompts/includes";
import { importedVersion, importPromptBody } from "@promptstore/core/schemas";
import { FULL_HASH } from "@promptstore/core/version-ref";
import { z } from "zod";
import type { ImportedPrompt, PromptListItem, Promptstore } from "../../src/index.js";
import { CliError } from "../output.js";
import { BundleWriter } from "./bundle-writer.js";
import { api, connect, Progress, type RemoteOptions, talking } from "./connection.js";
import { pinsOfView } from "./pins.js";

const BUNDLE_FORMAT = "promptstore-bundle";

const bundledPrompt = importPromptBody.omit({ versions: true, latest_version: true, production_version: true }).extend({
  created_at: z.iso.datetime(),
  production_version: z.string().regex(FULL_HASH).nullable(),
  latest_version: z.string().regex(FULL_HASH),
  // Every version, oldest first: as many as the prompt has (the server takes them in requests of 100).
  versions: z.array(importedVersion).min(1),
  // Saved examples and the results kept of running them (docs/playground.md); absent in older bundles.
  examples: z.array(exportedExample.omit({ prompt_id: true })).optional(),
  results: z.array(exportedResult).optional(),
});

const bundleDocument = z.strictObject({
  format: z.literal(BUNDLE_FORMAT),
  format_version: z.literal(1),
  exported_at: z.iso.datetime(),
  project: z.strictObject({ id: z.string(), name: z.string() }),
  prompts: z.array(bundledPrompt),
});

export type Bundle = z.infer<typeof bundleDocument>;
type BundledPrompt = z.infer<typeof bundledPrompt>;
type BundledVersion = BundledPrompt["versions"][number];

/** What an export wrote. */
export interface ExportSummary {
  file: string;
  prompts: number;
  versions: number;
}

/**
 * Every prompt with every version (content, message, time, author), each hash checked against its content.
 * Written to the file prompt by prompt as it is read, in the bytes `JSON.stringify(bundle, null, 2)` gives:
 * a store of 100 000 prompts never sits in memory whole (bundle-writer.ts).
 */
export async function exportBundle(file: string, options: RemoteOptions): Promise<ExportSummary> {
  const client = connect(options);
  const list = await talking(() => client.list({ limit: 1 }));
  const writer = await BundleWriter.open(`${file}.tmp`, {
    format: BUNDLE_FORMAT,
    format_version: 1,
    exported_at: new Date().toISOString(),
    project: list.project,
  });
  let prompts = 0;
  let versionCount = 0;
  try {
    // Counted first for the progress line; the list itself is read again page by page below.
    const progress = new Progress("export", await talking(() => countPrompts(client)));
    // A few prompts are read at once (each is several requests, one after another), written in list order.
    const reading: Promise<BundledPrompt>[] = [];
    const writeNext = async () => {
      const bundled = await (reading.shift() as Promise<BundledPrompt>);
      await writer.add(bundled);
      prompts++;
      versionCount += bundled.versions.length;
      progress.step();
    };
    for await (const prompt of pagedPrompts(client)) {
      const read = exportPrompt(client, prompt, options);
      // Its failure is reported when its turn to be written comes, not as an unhandled rejection before.
      read.catch(() => {});
      reading.push(read);
      if (reading.length >= EXPORT_READS_AT_ONCE) await writeNext();
    }
    while (reading.length > 0) await writeNext();
    await writer.close();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  await rename(`${file}.tmp`, file);
  return { file, prompts, versions: versionCount };
}

/** Prompts read at once by `export`: 100 000 prompts one at a time took 7 minutes, mostly round trips. */
const EXPORT_READS_AT_ONCE = 8;

async function countPrompts(client: Promptstore): Promise<number> {
  let n = 0;
  for await (const _ of client.listAll()) n++;
  return n;
}

async function* pagedPrompts(client: Promptstore): AsyncGenerator<PromptListItem> {
  const iterator = client.listAll();
  for (;;) {
    const next = await talking(() => iterator.next());
    if (next.done) return;
    yield next.value;
  }
}

async function exportPrompt(
  client: Promptstore,
  prompt: PromptListItem,
  options: RemoteOptions,
): Promise<BundledPrompt> {
  const history = await talking(() => client.versions(prompt.id));
  const versions: BundledVersion[] = [];
  for (const v of [...history.versions].reverse()) {
    const view = await talking(() => client.get(prompt.id, { version: v.version, guard: false, cache: false }));
    // A version with includes travels as written (each section's source) with its pins (docs/includes.md).
    const pins = pinsOfView(view);
    const content = {
      sections: view.sections.map((s) => ({ title: s.title, content: s.source ?? s.content, enabled: s.enabled })),
      tools: (view.tools ?? []) as BundledVersion["tools"] & object,
      ...(view.model !== undefined ? { model: view.model as BundledVersion["model"] & object } : {}),
    };
    if (contentHash(pins === undefined ? content : { ...content, includes: pins }) !== v.version) {
      throw new CliError(`${prompt.id}: version ${v.version} read back with content of another hash`);
    }
    versions.push({
      version: v.version,
      message: v.message,
      created_at: v.created_at,
      saved_by: v.saved_by,
      sections: content.sections,
      tools: content.tools,
      ...(content.model !== undefined ? { model: content.model } : {}),
      ...(pins !== undefined ? { includes: pins } : {}),
    });
  }
  // Saved examples travel with their prompt, and so do the results kept for any of its versions.
  const path = `/api/v2/prompts/${encodeURIComponent(prompt.id)}/examples`;
  const examples = ((await api(options, "GET", path)) as { examples: { prompt_id?: string }[] }).examples;
  const results: unknown[] = [];
  if (examples.length > 0) {
    for (const v of versions) {
      results.push(
        ...((await api(options, "GET", `${path}/results?version=${v.version}`)) as { results: unknown[] }).results,
      );
    }
  }
  return {
    id: prompt.id,
    name: prompt.name,
    description: prompt.description,
    created_at: prompt.created_at,
    production_version: history.production_version,
    latest_version: history.latest_version,
    versions,
    ...(examples.length > 0
      ? {
          examples: examples.map(({ prompt_id: _, ...rest }) => rest) as BundledPrompt["examples"] & object,
          results: results as BundledPrompt["results"] & object,
        }
      : {}),
  };
}

async function readBundle(file: string): Promise<Bundle> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new CliError(
      `${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : "is not valid JSON"}`,
    );
  }
  const checked = bundleDocument.safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new CliError(`${file}: ${issue?.path.join(".") || "document"}: ${issue?.message ?? "is not a bundle"}`);
  }
  for (const prompt of checked.data.prompts) {
    for (const v of prompt.versions) {
      const hash = contentHash({
        sections: v.sections.map((s) => ({ title: s.title, content: s.content, enabled: s.enabled ?? true })),
        tools: v.tools ?? [],
        ...(v.model !== undefined ? { model: v.model } : {}),
        ...(v.includes !== undefined && Object.keys(v.includes).length > 0 ? { includes: v.includes } : {}),
      });
      if (hash !== v.version)
        throw new CliError(`${file}: ${prompt.id}: version ${v.version} does not match its content`);
    }
  }
  return checked.data;
}

/** Requests stay under any body limit of 1 MiB or more (4 MiB by default) and its 100 versions a request. */
const MAX_CHUNK_BYTES = 768 * 1024;
const MAX_CHUNK_VERSIONS = 100;

/** The versions in requests; the first holds latest (and production), which a created prompt needs at once. */
function chunks(prompt: BundledPrompt): BundledVersion[][] {
  const first = new Set([prompt.latest_version, prompt.production_version]);
  const ordered = [
    ...prompt.versions.filter((v) => first.has(v.version)),
    ...prompt.versions.filter((v) => !first.has(v.version)),
  ];
  const result: BundledVersion[][] = [];
  let current: BundledVersion[] = [];
  let bytes = 0;
  for (const v of ordered) {
    const size = Buffer.byteLength(JSON.stringify(v));
    if (current.length > 0 && (current.length >= MAX_CHUNK_VERSIONS || bytes + size > MAX_CHUNK_BYTES)) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(v);
    bytes += size;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** Per prompt, the server's own answer, summed over the requests a long history took. */
export type ImportResult = ImportedPrompt;

async function importOne(client: Promptstore, prompt: BundledPrompt, publishAsSource: boolean): Promise<ImportResult> {
  const production = publishAsSource && prompt.production_version !== null ? prompt.production_version : undefined;
  const total: ImportResult = {
    id: prompt.id,
    created: false,
    versions_created: 0,
    versions_existing: 0,
    latest_version: prompt.latest_version,
    production_version: null,
    published: false,
  };
  for (const versions of chunks(prompt)) {
    const answer: ImportedPrompt = await talking(() =>
      client.importPrompt({
        id: prompt.id,
        name: prompt.name,
        ...(prompt.description !== undefined ? { description: prompt.description } : {}),
        created_at: prompt.created_at,
        versions,
        latest_version: prompt.latest_version,
        ...(production !== undefined ? { production_version: production } : {}),
      }),
    );
    total.created ||= answer.created;
    total.versions_created += answer.versions_created;
    total.versions_existing += answer.versions_existing;
    total.latest_version = answer.latest_version;
    total.production_version = answer.production_version;
    total.published ||= answer.published;
  }
  return total;
}

/** Every prompt of the bundle into the key's project; production moves only with `publishAsSource`. */
export async function importBundle(
  file: string,
  options: RemoteOptions & { publishAsSource?: boolean },
): Promise<ImportResult[]> {
  const bundle = await readBundle(file);
  const client = connect(options);
  const results: ImportResult[] = [];
  const progress = new Progress("import", bundle.prompts.length);
  for (const prompt of piecesFirst(bundle.prompts)) {
    results.push(await importOne(client, prompt, options.publishAsSource ?? false));
    if (prompt.examples?.length) {
      await api(options, "POST", `/api/v2/prompts/${encodeURIComponent(prompt.id)}/examples/import`, {
        examples: prompt.examples,
        results: prompt.results ?? [],
      });
    }
    progress.step();
  }
  return results;
}

/**
 * The bundle's prompts with every prompt after the prompts its versions' includes pin (docs/includes.md), so
 * that each pin names a version imported already; otherwise in the bundle's order. Prompts whose versions pin
 * each other's (possible across versions) keep the bundle's order among themselves: the server refuses a pin
 * it does not hold yet, naming it, and an import again after the rest is in goes through.
 */
export function piecesFirst(prompts: BundledPrompt[]): BundledPrompt[] {
  const ids = new Set(prompts.map((p) => p.id));
  const needs = new Map<string, Set<string>>();
  for (const p of prompts) {
    const pieces = new Set<string>();
    for (const v of p.versions) {
      for (const reference of Object.keys(v.includes ?? {})) {
        const parsed = parseInclude(reference);
        if (!("problem" in parsed) && parsed.prompt !== p.id && ids.has(parsed.prompt)) pieces.add(parsed.prompt);
      }
    }
    needs.set(p.id, pieces);
  }
  if ([...needs.values()].every((n) => n.size === 0)) return prompts;
  const ordered: BundledPrompt[] = [];
  const placed = new Set<string>();
  let remaining = prompts;
  while (remaining.length > 0) {
    const ready = remaining.filter((p) => [...(needs.get(p.id) ?? [])].every((id) => placed.has(id)));
    // A circle among the rest: they go in the bundle's order.
    const next = ready.length > 0 ? ready : remaining;
    for (const p of next) {
      ordered.push(p);
      placed.add(p.id);
    }
    remaining = remaining.filter((p) => !placed.has(p.id));
  }
  return ordered;
}

export function describeImport(results: ImportResult[]): string {
  const lines = results.map((r) => {
    const what = r.created ? "created" : r.versions_created > 0 ? "updated" : "unchanged";
    return `${what.padEnd(9)} ${r.id}: ${r.versions_created} versions added, ${r.versions_existing} already there${r.published ? ", production moved" : ""}`;
  });
  const made = results.reduce((n, r) => n + r.versions_created, 0);
  lines.push(
    `${results.length} prompts: ${results.filter((r) => r.created).length} created, ${made} versions added, ${results.filter((r) => r.published).length} published`,
  );
  return lines.join("\n");
}
