import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ExampleView, exportedExample } from "@promptstore/core/playground";
import { describeZodError } from "@promptstore/core/schemas";
import { z } from "zod";
import { CliError } from "../output.js";
import { api, type RemoteOptions } from "./connection.js";

/**
 * A prompt's saved examples (docs/playground.md) as a file beside its prompt file: `support-bot.md` has
 * `support-bot.examples.json`, the examples as the API answers them, ids kept so a push updates rather
 * than duplicates. Results are not written: they belong to the server that ran them (export carries them).
 */
export const examplesFileOf = (promptFile: string): string => promptFile.replace(/\.md$/, ".examples.json");

const examplesDocument = z.strictObject({ examples: z.array(exportedExample) });

/** Writes the prompt's examples beside its file, or removes the file when it has none. */
export async function pullExamples(
  dir: string,
  promptFile: string,
  promptId: string,
  options: RemoteOptions,
): Promise<void> {
  const { examples } = (await api(options, "GET", `/api/v2/prompts/${encodeURIComponent(promptId)}/examples`)) as {
    examples: ExampleView[];
  };
  const path = join(dir, examplesFileOf(promptFile));
  if (examples.length === 0) {
    await rm(path, { force: true });
    return;
  }
  const document = { examples: examples.map(({ prompt_id: _, ...rest }) => rest) };
  await writeFile(path, `${JSON.stringify(document, null, 2)}\n`);
}

/** Sends the examples file beside a prompt file, when there is one; returns how many examples it held. */
export async function pushExamples(
  dir: string,
  promptFile: string,
  promptId: string,
  options: RemoteOptions,
): Promise<number> {
  const file = examplesFileOf(promptFile);
  let text: string;
  try {
    text = await readFile(join(dir, file), "utf8");
  } catch {
    return 0;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${file}: is not valid JSON`);
  }
  const checked = examplesDocument.safeParse(parsed);
  if (!checked.success) throw new CliError(`${file}: ${describeZodError(checked.error, "examples")}`);
  await api(options, "POST", `/api/v2/prompts/${encodeURIComponent(promptId)}/examples/import`, {
    examples: checked.data.examples,
    results: [],
  });
  return checked.data.examples.length;
}
