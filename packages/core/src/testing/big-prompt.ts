/**
 * A system prompt of the size today's agents ship (about 250 KB of Markdown, most of it in one section),
 * made up here so the repository holds no third-party text. Deterministic: the same options give the same
 * bytes, so server, client and dashboard tests and the benches all see one prompt. Realistic on purpose:
 * level-2 and level-3 headings, lists, code fences (some with `#` lines, which are not sections), tables,
 * long paragraphs, variables, and characters beyond ASCII (bytes and characters differ).
 */

const WORDS = (
  "assistant user request answer context tool call result file change review test plan step reason detail " +
  "summary example case error message output format rule guideline policy safety privacy account order " +
  "refund shipment invoice customer agent session memory search query index record field value schema " +
  "function argument parameter response stream token limit budget latency retry backoff cache version " +
  "release label rollout project workspace branch commit diff patch merge conflict build deploy monitor"
).split(" ");

const VERBS = "check confirm explain prefer avoid never always cite summarise verify ask list keep".split(" ");

/** A small linear congruential generator: enough variety, and identical in every runtime. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const utf8 = new TextEncoder();
const byteLength = (text: string) => utf8.encode(text).length;

function sentence(next: () => number): string {
  const pick = (list: string[]) => list[Math.floor(next() * list.length)] as string;
  const length = 8 + Math.floor(next() * 14);
  const words = [pick(VERBS)];
  for (let i = 1; i < length; i++) words.push(pick(WORDS));
  if (next() < 0.08) words.push("— café, naïve, 東京 ✓");
  const text = words.join(" ");
  return `${text[0]?.toUpperCase()}${text.slice(1)}.`;
}

function paragraph(next: () => number, sentences: number): string {
  return Array.from({ length: sentences }, () => sentence(next)).join(" ");
}

function block(next: () => number, n: number): string {
  const kind = n % 5;
  if (kind === 0) return paragraph(next, 6 + Math.floor(next() * 8));
  if (kind === 1) {
    return Array.from({ length: 4 + Math.floor(next() * 5) }, (_, i) =>
      i % 3 === 2 ? `  - ${sentence(next)}` : `- ${sentence(next)}`,
    ).join("\n");
  }
  if (kind === 2) {
    return [
      "```bash",
      "# install and check (a comment, not a heading)",
      `promptstore pull --project demo-${n}`,
      `grep -n "rule ${n}" prompts/*.md`,
      "```",
    ].join("\n");
  }
  if (kind === 3) {
    return Array.from({ length: 3 + Math.floor(next() * 4) }, (_, i) => `${i + 1}. ${sentence(next)}`).join("\n");
  }
  return [
    "| Case | What to do |",
    "|---|---|",
    ...Array.from({ length: 3 }, (_, i) => `| case ${n}.${i} | ${sentence(next)} |`),
  ].join("\n");
}

export interface BigPromptOptions {
  /** Approximate size in bytes of the whole Markdown (UTF-8). Default 250 000. */
  bytes?: number;
  seed?: number;
}

/** The Markdown of the prompt: `# Role`, a big `# Instructions`, `# Tools`, `# Output Format`. */
export function bigPromptMarkdown(options: BigPromptOptions = {}): string {
  const target = options.bytes ?? 250_000;
  const next = random(options.seed ?? 1);
  const role = `You are the support agent of {{ company }}, talking to {{ customer_name }}.\n\n${paragraph(next, 4)}`;
  const tools = `${paragraph(next, 3)}\n\n${block(next, 2)}`;
  const output = `${paragraph(next, 2)}\n\n${block(next, 1)}`;
  const fixed = byteLength(`# Role\n\n${role}\n\n# Tools\n\n${tools}\n\n# Output Format\n\n${output}\n`);
  const parts: string[] = [];
  let size = 0;
  for (let n = 0; size < target - fixed; n++) {
    const part =
      n % 12 === 0
        ? `## Part ${n / 12 + 1}\n\n${block(next, n)}`
        : n % 4 === 0
          ? `### Rule ${n}\n\n${block(next, n)}`
          : block(next, n);
    parts.push(part);
    size += byteLength(part) + 2;
  }
  return `# Role\n\n${role}\n\n# Instructions\n\n${parts.join("\n\n")}\n\n# Tools\n\n${tools}\n\n# Output Format\n\n${output}\n`;
}

/**
 * The same prompt with one paragraph of the big section rewritten: what a person changes between two
 * versions, for diffs and for "a push with a change makes one version".
 */
export function editedBigPrompt(markdown: string, edit = "Rewritten: keep answers short and cite the file."): string {
  const at = markdown.indexOf("\n\n", Math.floor(markdown.length / 2));
  const end = markdown.indexOf("\n\n", at + 2);
  return `${markdown.slice(0, at + 2)}${edit}${markdown.slice(end)}`;
}
