import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import {
  caseId,
  caseJson,
  type DatasetCase,
  datasetCase,
  type NormalCase,
  normalCase,
} from "@promptstore/core/evaluations/cases";
import type { ExampleView } from "@promptstore/core/playground";
import { describeZodError } from "@promptstore/core/schemas";
import type { Caller } from "../access.js";
import type { Labeled } from "./dataset-build.js";
import { type FileCase, fileCases, type ImportFormat } from "./dataset-files.js";

/** Where a dataset version's cases come from besides a request body: an imported file, a prompt's saved examples. */
export interface DatasetSourceOptions {
  /** A prompt's saved examples, as the playground lists them to this caller (its permission and 404 included). */
  examplesOf(caller: Caller, promptId: string): Promise<{ examples: ExampleView[] }>;
}

/** A file's cases, each checked as a case (`line 12: vars.company: must be a string`); their lines kept. */
export async function* checkedFileCases(
  file: { format: ImportFormat; source: AsyncIterable<Buffer> },
  lines: number[],
  maxImportBytes: number,
): AsyncGenerator<Labeled> {
  for await (const item of fileCases(file.format, file.source, maxImportBytes)) {
    lines.push(item.line);
    yield { label: `line ${item.line}`, value: checkedCase(item) };
  }
}

/** A prompt's saved examples as cases, in their order; identical examples make one case. */
export async function fromExamples(
  examplesOf: DatasetSourceOptions["examplesOf"],
  caller: Caller,
  promptId: string,
): Promise<{ cases: Labeled[]; examples: number }> {
  let examples: ExampleView[];
  try {
    examples = (await examplesOf(caller, promptId)).examples;
  } catch (error) {
    if (error instanceof AppError && error.status === 404) throw notFound(`from_examples: ${error.message}`);
    throw error;
  }
  if (examples.length === 0) throw badRequest(`from_examples: prompt ${promptId} has no saved examples`);
  const seen = new Set<string>();
  const cases: Labeled[] = [];
  for (const example of examples) {
    const candidate: DatasetCase = {
      vars: example.variables,
      messages: example.messages as DatasetCase["messages"],
      ...(example.good_answer === null ? {} : { expected: example.good_answer }),
    };
    const parsed = datasetCase.safeParse(candidate);
    if (!parsed.success) {
      throw badRequest(`from_examples: example ${example.id}: ${describeZodError(parsed.error, "case")}`);
    }
    const value = normalCase(parsed.data);
    const id = caseId(caseJson(value));
    if (seen.has(id)) continue;
    seen.add(id);
    cases.push({ label: `from_examples (example ${example.id})`, value });
  }
  return { cases, examples: examples.length };
}

function checkedCase(item: FileCase): NormalCase {
  const parsed = datasetCase.safeParse(item.value);
  if (!parsed.success) throw badRequest(`line ${item.line}: ${describeZodError(parsed.error, "case")}`);
  return normalCase(parsed.data);
}

export async function* iterate<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}
