import type { PromptView } from "@promptstore/core/views";
import { useQuery } from "@tanstack/react-query";
import { diffLines } from "diff";
import { useMemo } from "react";
import { promptViewQuery } from "../api/queries";
import { ChunkedText, FlowingText } from "../ui/ChunkedText";
import { shortHash } from "../ui/format";
import { ErrorState, Loading } from "../ui/States";
import {
  countByStatus,
  diffModel,
  diffSections,
  diffTools,
  type ModelChange,
  type SectionChange,
  type ToolChange,
} from "./section-diff";
import { type TextPart, textDiff } from "./text-diff";

interface DiffViewProps {
  projectId: string;
  promptId: string;
  from: string;
  to: string;
}

/** Two versions side by side, section by section, then their tools. */
export default function DiffView({ projectId, promptId, from, to }: DiffViewProps) {
  const before = useQuery(promptViewQuery(projectId, promptId, from, false));
  const after = useQuery(promptViewQuery(projectId, promptId, to, false));
  if (before.isPending || after.isPending) return <Loading label="Loading the two versions…" />;
  if (before.isError) return <ErrorState error={before.error} onRetry={() => before.refetch()} />;
  if (after.isError) return <ErrorState error={after.error} onRetry={() => after.refetch()} />;
  return <Comparison before={before.data} after={after.data} />;
}

const STATUS_WORDS = { changed: "changed", moved: "moved", added: "added", removed: "removed", unchanged: "unchanged" };

/**
 * Two prompt views compared. `labels` name the sides when they are not two saved versions (the includes'
 * "update available": the served version, and its text with the new pins).
 */
export function Comparison({
  before,
  after,
  labels,
}: {
  before: PromptView;
  after: PromptView;
  labels?: { from: string; to: string };
}) {
  const sections = useMemo(() => diffSections(before.sections, after.sections), [before, after]);
  const tools = useMemo(() => diffTools(before.tools ?? [], after.tools ?? []), [before, after]);
  const counts = countByStatus(sections);
  const toolCounts = countByStatus(tools);
  const model = useMemo(() => diffModel(before.model, after.model), [before, after]);
  const summary = (["changed", "moved", "added", "removed", "unchanged"] as const)
    .filter((s) => counts[s])
    .map((s) => `${counts[s]} ${STATUS_WORDS[s]}`)
    .join(" · ");
  const toolsChanged = tools.some((t) => t.status !== "unchanged");
  const fromLabel = labels?.from ?? shortHash(before.version);
  const toLabel = labels?.to ?? shortHash(after.version);

  if (before.version === after.version) {
    return (
      <div className="card-body">
        <p className="muted">Both sides are version {fromLabel}: pick two different versions.</p>
      </div>
    );
  }

  return (
    <div className="diff">
      <p className="diff-summary" role="status">
        <span className="hash">{fromLabel}</span> → <span className="hash">{toLabel}</span>: sections{" "}
        {summary || "none"}
        {tools.length > 0 ? `; tools ${toolsChanged ? describeToolCounts(toolCounts) : "unchanged"}` : ""}
        {model ? `; model settings ${STATUS_WORDS[model.status]}` : ""}.
      </p>
      <ol className="diff-list" aria-label="Sections">
        {sections.map((change, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the list is recomputed whole; titles repeat
          <SectionDiffItem key={i} change={change} fromLabel={fromLabel} toLabel={toLabel} />
        ))}
      </ol>
      {tools.length > 0 ? (
        <div className="diff-tools">
          <h3>Tools</h3>
          <ol className="diff-list" aria-label="Tools">
            {tools.map((change) => (
              <ToolDiffItem key={`${change.status}-${change.name}`} change={change} />
            ))}
          </ol>
        </div>
      ) : null}
      {model ? (
        <div className="diff-tools">
          <h3>Model settings</h3>
          <ol className="diff-list" aria-label="Model settings">
            <ModelDiffItem change={model} fromLabel={fromLabel} toLabel={toLabel} />
          </ol>
        </div>
      ) : null}
    </div>
  );
}

/** The settings of the two versions, whole, with the changed words marked: they are short. */
function ModelDiffItem({ change, fromLabel, toLabel }: { change: ModelChange; fromLabel: string; toLabel: string }) {
  const parts = useMemo(
    () => (change.before !== null && change.after !== null ? textDiff(change.before, change.after) : null),
    [change],
  );
  if (change.status === "unchanged") {
    return (
      <li className="diff-item diff-unchanged">
        <details>
          <summary className="diff-head">
            <StatusBadge status="unchanged" />
            <strong className="diff-title">{change.name}</strong>
          </summary>
          <pre className="diff-text diff-text-plain">{change.after}</pre>
        </details>
      </li>
    );
  }
  return (
    <li className={`diff-item diff-${change.status}`}>
      <div className="diff-head">
        <StatusBadge status={change.status} />
        <strong className="diff-title">{change.name}</strong>
      </div>
      <div className="diff-cols">
        <DiffColumn side="before" version={fromLabel} parts={parts} text={change.before ?? undefined} />
        <DiffColumn side="after" version={toLabel} parts={parts} text={change.after ?? undefined} />
      </div>
    </li>
  );
}

function describeToolCounts(counts: Partial<Record<ToolChange["status"], number>>) {
  return (["changed", "added", "removed", "unchanged"] as const)
    .filter((s) => counts[s])
    .map((s) => `${counts[s]} ${s}`)
    .join(" · ");
}

function StatusBadge({ status }: { status: SectionChange["status"] | ToolChange["status"] }) {
  return <span className={`badge diff-badge diff-badge-${status}`}>{STATUS_WORDS[status]}</span>;
}

function Side({ parts, side, text }: { parts: TextPart[] | null; side: "before" | "after"; text: string }) {
  if (!parts) {
    return (
      <pre className="diff-text">
        {text === "" ? <span className="subtle">(empty)</span> : <ChunkedText text={text} />}
      </pre>
    );
  }
  // Whether what this side has drawn so far ends with a newline (FlowingText keeps the blank line after it).
  let afterBreak = false;
  return (
    <pre className="diff-text">
      {parts.map((part, i) => {
        if ((part.added && side !== "after") || (part.removed && side !== "before")) return null;
        const breakBefore = afterBreak;
        afterBreak = part.value.endsWith("\n");
        // biome-ignore-start lint/suspicious/noArrayIndexKey: parts have no identity but their place
        if (part.added) return <ins key={i}>{part.value}</ins>;
        if (part.removed) return <del key={i}>{part.value}</del>;
        return (
          <span key={i}>
            <FlowingText text={part.value} afterBreak={breakBefore} />
          </span>
        );
        // biome-ignore-end lint/suspicious/noArrayIndexKey: parts have no identity but their place
      })}
    </pre>
  );
}

/** One side of a section's comparison; `text` is undefined when the section is not in that version. */
function DiffColumn({
  side,
  version,
  parts,
  text,
}: {
  side: "before" | "after";
  version: string;
  parts: TextPart[] | null;
  text: string | undefined;
}) {
  return (
    <div className={`diff-col diff-col-${side}`}>
      <div className="diff-col-label">
        {side === "before" ? "Before" : "After"} <span className="hash">{version}</span>
      </div>
      {text !== undefined ? (
        <Side parts={parts} side={side} text={text} />
      ) : (
        <p className="diff-absent">Not in this version</p>
      )}
    </div>
  );
}

function SectionDiffItem({
  change,
  fromLabel,
  toLabel,
}: {
  change: SectionChange;
  fromLabel: string;
  toLabel: string;
}) {
  const parts = useMemo(
    () =>
      change.before && change.after && change.contentChanged
        ? textDiff(change.before.content, change.after.content)
        : null,
    [change],
  );
  const notes: string[] = [];
  if (change.moved && change.fromIndex !== null && change.toIndex !== null) {
    notes.push(`moved from position ${change.fromIndex + 1} to ${change.toIndex + 1}`);
  }
  if (change.enabledChanged && change.after) notes.push(change.after.enabled ? "enabled" : "disabled");
  if (change.moved && change.contentChanged) notes.push("content changed");
  if (change.status === "changed" && !change.contentChanged && change.enabledChanged) notes.push("content unchanged");
  const disabledNow = change.after ? !change.after.enabled : change.before ? !change.before.enabled : false;

  const title = <strong className="diff-title">{change.title}</strong>;
  if (change.status === "unchanged" || (change.status === "moved" && !change.contentChanged)) {
    return (
      <li className={`diff-item diff-${change.status}`}>
        <details>
          <summary className="diff-head">
            <StatusBadge status={change.status} />
            {title}
            {notes.map((n) => (
              <span key={n} className="diff-note">
                {n}
              </span>
            ))}
            {disabledNow && !change.enabledChanged ? <span className="diff-note">disabled</span> : null}
          </summary>
          <pre className="diff-text diff-text-plain">{change.after?.content}</pre>
        </details>
      </li>
    );
  }

  return (
    <li className={`diff-item diff-${change.status}`}>
      <div className="diff-head">
        <StatusBadge status={change.status} />
        {title}
        {notes.map((n) => (
          <span key={n} className="diff-note">
            {n}
          </span>
        ))}
      </div>
      <div className="diff-cols">
        <DiffColumn side="before" version={fromLabel} parts={parts} text={change.before?.content} />
        <DiffColumn side="after" version={toLabel} parts={parts} text={change.after?.content} />
      </div>
    </li>
  );
}

function ToolDiffItem({ change }: { change: ToolChange }) {
  const lines = useMemo(
    () =>
      change.status === "changed" && change.before && change.after ? diffLines(change.before, change.after) : null,
    [change],
  );
  const body =
    lines !== null ? (
      <pre className="diff-text diff-lines">
        {lines.map((part, i) => {
          const mark = part.added ? "+" : part.removed ? "-" : " ";
          const text = part.value
            .replace(/\n$/, "")
            .split("\n")
            .map((line) => `${mark} ${line}`)
            .join("\n");
          // biome-ignore-start lint/suspicious/noArrayIndexKey: parts have no identity but their place
          if (part.added) return <ins key={i}>{`${text}\n`}</ins>;
          if (part.removed) return <del key={i}>{`${text}\n`}</del>;
          return <span key={i}>{`${text}\n`}</span>;
          // biome-ignore-end lint/suspicious/noArrayIndexKey: parts have no identity but their place
        })}
      </pre>
    ) : (
      <pre
        className={`diff-text ${change.status === "added" ? "diff-all-added" : change.status === "removed" ? "diff-all-removed" : "diff-text-plain"}`}
      >
        {change.after ?? change.before}
      </pre>
    );
  if (change.status === "unchanged") {
    return (
      <li className="diff-item diff-unchanged">
        <details>
          <summary className="diff-head">
            <StatusBadge status="unchanged" />
            <strong className="diff-title mono">{change.name}</strong>
          </summary>
          {body}
        </details>
      </li>
    );
  }
  return (
    <li className={`diff-item diff-${change.status}`}>
      <div className="diff-head">
        <StatusBadge status={change.status} />
        <strong className="diff-title mono">{change.name}</strong>
      </div>
      {body}
    </li>
  );
}
