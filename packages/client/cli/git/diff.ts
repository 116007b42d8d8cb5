import type { ModelSettings, Section } from "@promptstore/core/prompts/content";
import { modelJson } from "@promptstore/core/prompts/hash";
import { structuredPatch } from "diff";
import { connect, type RemoteOptions, remotePrompts, short, talking } from "./connection.js";
import { readLock } from "./lockfile.js";
import type { PromptFile } from "./prompt-file.js";
import { fetchPromptFile } from "./pull.js";
import { classify } from "./state.js";
import { readWorkspace } from "./workspace.js";

export interface SectionChange {
  change: "added" | "removed" | "changed";
  title: string;
  /** Its position (1-based) in the file, or on the server when removed. */
  position: number;
  /** Set when the section was enabled or disabled. */
  enabled?: { from: boolean; to: boolean };
  /** Unified-diff lines of its content: ` ` context, `-` server, `+` file; `@@` between hunks. */
  lines: string[];
}

export interface PromptDiff {
  id: string;
  file: string;
  /** The server's latest (what the file is compared with); null for a prompt push would create. */
  from: string | null;
  /** The hash of the file. */
  to: string;
  name?: { from: string; to: string };
  description?: { from: string; to: string };
  sections: SectionChange[];
  /** Unified-diff lines of the tools as JSON, when they differ. */
  tools?: string[];
  /** Unified-diff lines of the model settings as JSON (null for none), when they differ. */
  model?: string[];
}

/** Settings in canonical key order (as the server reads them back), so that only a real change shows. */
function settingsText(model: ModelSettings | undefined): string {
  return model === undefined ? "null" : JSON.stringify(JSON.parse(modelJson(model)), null, 2);
}

function lineDiff(from: string, to: string): string[] {
  const patch = structuredPatch("", "", `${from}\n`, `${to}\n`, "", "", { context: 3 });
  const lines: string[] = [];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
    lines.push(...hunk.lines.filter((l) => !l.startsWith("\\")));
  }
  return lines;
}

const whole = (mark: string, content: string) => (content === "" ? [] : content.split("\n").map((l) => mark + l));

/**
 * Section by section: sections are matched by title in order (a longest common subsequence), so a section
 * moved or inserted shows as such and a matched one shows only the lines that changed.
 */
export function diffSections(from: readonly Section[], to: readonly Section[]): SectionChange[] {
  const n = from.length;
  const m = to.length;
  // LCS table over titles; prompts have at most 100 sections.
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const row = lcs[i] as number[];
      row[j] =
        from[i]?.title === to[j]?.title
          ? (lcs[i + 1]?.[j + 1] ?? 0) + 1
          : Math.max(lcs[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const changes: SectionChange[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    const a = from[i];
    const b = to[j];
    if (a && b && a.title === b.title) {
      if (a.content !== b.content || a.enabled !== b.enabled) {
        changes.push({
          change: "changed",
          title: b.title,
          position: j + 1,
          ...(a.enabled !== b.enabled ? { enabled: { from: a.enabled, to: b.enabled } } : {}),
          lines: a.content === b.content ? [] : lineDiff(a.content, b.content),
        });
      }
      i++;
      j++;
    } else if (a && (!b || (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      // Removals before additions, as in any diff.
      changes.push({ change: "removed", title: a.title, position: i + 1, lines: whole("-", a.content) });
      i++;
    } else if (b) {
      changes.push({ change: "added", title: b.title, position: j + 1, lines: whole("+", b.content) });
      j++;
    }
  }
  return changes;
}

export function diffPrompt(
  id: string,
  file: string,
  from: PromptFile | null,
  to: PromptFile,
  toHash: string,
  fromHash: string | null,
): PromptDiff {
  const result: PromptDiff = {
    id,
    file,
    from: fromHash,
    to: toHash,
    sections: diffSections(from?.content.sections ?? [], to.content.sections),
  };
  if (from && from.name !== to.name) result.name = { from: from.name, to: to.name };
  if (from && from.description !== to.description) result.description = { from: from.description, to: to.description };
  const fromTools = JSON.stringify(from?.content.tools ?? [], null, 2);
  const toTools = JSON.stringify(to.content.tools, null, 2);
  if (fromTools !== toTools) result.tools = lineDiff(fromTools, toTools);
  const fromModel = settingsText(from?.content.model);
  const toModel = settingsText(to.content.model);
  if (fromModel !== toModel) result.model = lineDiff(fromModel, toModel);
  return result;
}

/** What `push` would change: every file that differs from the lock, against the server's latest. */
export async function diff(dir: string, options: RemoteOptions): Promise<PromptDiff[]> {
  const client = connect(options);
  const lock = await readLock(dir);
  const local = await readWorkspace(dir, lock);
  const remote = await talking(() => remotePrompts(client));
  const diffs: PromptDiff[] = [];
  for (const state of classify(local, lock, remote)) {
    if (!state.local) continue;
    const server = state.remote;
    if (server && server.latest_version === state.local.hash) {
      const meta = state.local.prompt;
      if (meta.name === server.name && meta.description === server.description) continue;
    }
    if (!state.localChanged) continue;
    const base = server ? await talking(() => fetchPromptFile(client, server, server.latest_version)) : null;
    const d = diffPrompt(
      state.id,
      state.file,
      base,
      state.local.prompt,
      state.local.hash,
      server?.latest_version ?? null,
    );
    if (d.sections.length > 0 || d.name || d.description || d.tools || d.model || !base) diffs.push(d);
  }
  return diffs;
}

// Written out rather than util.styleText, which on Node 20 also looks at process.stdout itself.
const ANSI = { bold: [1, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;

/** Readable text; coloured only when `colour` (stdout is a terminal). */
export function describeDiff(diffs: PromptDiff[], colour: boolean): string {
  const paint = (style: keyof typeof ANSI, text: string) =>
    colour ? `\u001b[${ANSI[style][0]}m${text}\u001b[${ANSI[style][1]}m` : text;
  const line = (l: string) =>
    l.startsWith("@@")
      ? paint("cyan", l)
      : l.startsWith("+")
        ? paint("green", l)
        : l.startsWith("-")
          ? paint("red", l)
          : l;
  if (diffs.length === 0) return "no differences: push would change nothing";
  const out: string[] = [];
  for (const d of diffs) {
    out.push(
      paint(
        "bold",
        `${d.file} (${d.id}): ${d.from ? `server latest ${short(d.from)}` : "new prompt"} → file ${short(d.to)}`,
      ),
    );
    if (d.name) out.push(`  name: ${line(`-${d.name.from}`)} ${line(`+${d.name.to}`)}`);
    if (d.description) out.push(`  description: ${line(`-${d.description.from}`)} ${line(`+${d.description.to}`)}`);
    for (const s of d.sections) {
      const enabled = s.enabled ? ` (${s.enabled.to ? "enabled" : "disabled"})` : "";
      const head = `  ${s.change} section ${s.position} "${s.title}"${enabled}`;
      out.push(paint(s.change === "added" ? "green" : s.change === "removed" ? "red" : "yellow", head));
      for (const l of s.lines) out.push(`    ${line(l)}`);
    }
    if (d.tools) {
      out.push(paint("yellow", "  tools changed"));
      for (const l of d.tools) out.push(`    ${line(l)}`);
    }
    if (d.model) {
      out.push(paint("yellow", "  model settings changed"));
      for (const l of d.model) out.push(`    ${line(l)}`);
    }
  }
  return out.join("\n");
}
