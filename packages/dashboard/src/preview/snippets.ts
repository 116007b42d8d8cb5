import { VARIABLE_PATTERN } from "@promptstore/core/prompts/variables";
import type { SdkFile } from "../api/queries";

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

/** The install command for the client of `language` from this server, else from a clone of the repository. */
export function installCommand(origin: string, files: readonly SdkFile[], language: "typescript" | "python"): string {
  const built = files.find((f) => f.language === language);
  if (language === "typescript") {
    return built ? `npm install ${origin}/sdk/${built.file}` : "npm install <clone>/packages/client";
  }
  return built ? `pip install ${origin}/sdk/${built.file}` : "pip install <clone>/clients/python";
}

const getOptions = ({ version, guard }: SnippetTarget, quote: (text: string) => string, sep: string): string => {
  const options: string[] = [];
  if (version !== "production") options.push(`version${sep}${quote(version)}`);
  if (!guard) options.push(`guard${sep}${guard ? "true" : "false"}`);
  return options.join(", ");
};

export function sdkSnippet(target: SnippetTarget, variables: readonly string[], files: readonly SdkFile[]): string {
  const options = getOptions(target, JSON.stringify, ": ");
  const lines = [
    `// ${installCommand(target.origin, files, "typescript")}`,
    'import { Promptstore } from "@promptstore/client";',
    "",
    "const promptstore = new Promptstore({",
    `  baseUrl: "${target.origin}",`,
    '  apiKey: process.env.PROMPTSTORE_API_KEY ?? "",',
    "});",
    `const prompt = await promptstore.get(${JSON.stringify(target.promptId)}${options ? `, { ${options} }` : ""}); // then from memory`,
  ];
  if (variables.length > 0) {
    lines.push(
      `const text = promptstore.fill(prompt, { ${variables.map((v) => `${JSON.stringify(v)}: ""`).join(", ")} });`,
    );
  }
  return lines.join("\n");
}

export function pythonSnippet(target: SnippetTarget, variables: readonly string[], files: readonly SdkFile[]): string {
  const options = getOptions(target, JSON.stringify, "=").replace("guard=false", "guard=False");
  const lines = [
    `# ${installCommand(target.origin, files, "python")}`,
    "import os",
    "from promptstore import Promptstore",
    "",
    `promptstore = Promptstore(base_url="${target.origin}", api_key=os.environ["PROMPTSTORE_API_KEY"])`,
    `prompt = promptstore.get(${JSON.stringify(target.promptId)}${options ? `, ${options}` : ""})  # then from memory`,
  ];
  if (variables.length > 0) {
    lines.push(`text = promptstore.fill(prompt, {${variables.map((v) => `${JSON.stringify(v)}: ""`).join(", ")}})`);
  }
  return lines.join("\n");
}
