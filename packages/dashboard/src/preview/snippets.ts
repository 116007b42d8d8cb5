import { VARIABLE_PATTERN } from "@promptstore/core/variables";

/** The code an application runs to read a prompt: shown in the preview, with the real origin and id. */

export interface SnippetTarget {
  origin: string;
  promptId: string;
  /** "production" (the default, left out of the URL), "latest" or a hash. */
  version: string;
  guard: boolean;
}

export function readUrl({ origin, promptId, version, guard }: SnippetTarget): string {
  const query = new URLSearchParams();
  if (version !== "production") query.set("version", version);
  if (!guard) query.set("guard", "false");
  const search = query.toString();
  return `${origin}/api/v2/prompts/${encodeURIComponent(promptId)}${search ? `?${search}` : ""}`;
}

export function curlSnippet(target: SnippetTarget): string {
  return [`curl -s "${readUrl(target)}" \\`, `  -H "x-api-key: $PROMPTSTORE_API_KEY"`].join("\n");
}

export function fetchSnippet(target: SnippetTarget, variables: readonly string[]): string {
  const lines = [
    `const response = await fetch("${readUrl(target)}", {`,
    `  headers: { "x-api-key": process.env.PROMPTSTORE_API_KEY ?? "" },`,
    "});",
    "const body = await response.json();",
    "if (!body.success) throw new Error(body.error);",
    "// body.data.prompt: the assembled text; body.data.tools: the tools, if any",
    "const prompt: string = body.data.prompt;",
  ];
  if (variables.length > 0) {
    lines.push(
      "",
      "// Fill the variables: every {{ name }} is replaced by its value.",
      `const values: Record<string, string> = { ${variables.map((v) => `${JSON.stringify(v)}: ""`).join(", ")} };`,
      `const text = prompt.replace(/${VARIABLE_PATTERN.source}/g, (whole, name: string) =>`,
      "  Object.hasOwn(values, name) ? values[name] : whole,",
      ");",
    );
  }
  return lines.join("\n");
}
