import { expandIncludes } from "@promptstore/core/prompts/includes";
import "./includes.css";
import { useId, useMemo } from "react";
import { Link } from "react-router";
import { ChunkedText } from "../ui/ChunkedText";
import { shortHash } from "../ui/format";
import { distinctIncludes } from "./expand";
import { type IncludeEditing, promptHref } from "./include-help";
import { useIncludeTexts } from "./use-include-texts";

/**
 * Under a section's editor, when it writes includes: each include with its pin (kept from the version edited)
 * or what a save would pin now, a link to the included prompt, and the section's text with its includes
 * expanded (the same text the save and reads would serve).
 */
export function SectionIncludes({ content, editing }: { content: string; editing: IncludeEditing }) {
  const refs = useMemo(() => distinctIncludes([content]), [content]);
  const texts = useIncludeTexts(editing.projectId, refs, editing.pins);
  const headingId = useId();
  if (refs.length === 0) return null;
  const ready = new Map<string, string>();
  for (const [reference, text] of texts) if (text.state === "ready") ready.set(reference, text.text);
  const waiting = [...texts.values()].some((t) => t.state === "loading");
  const expanded = expandIncludes(content, ready);
  return (
    <div className="section-includes">
      <p className="section-includes-head" id={headingId}>
        Includes <span className="muted small">(Ctrl+click or ⌘+click one in the text to open it)</span>
      </p>
      <ul className="include-list" aria-labelledby={headingId}>
        {refs.map((ref) => {
          const pin = editing.pins[ref.reference];
          const text = texts.get(ref.reference);
          return (
            <li key={ref.reference} className="include-item">
              <code className="include-chip">{`{{> ${ref.reference}}}`}</code>
              <span className="include-state">
                {pin !== undefined ? (
                  <>
                    pinned to <span className="hash">{shortHash(pin)}</span>
                  </>
                ) : text?.state === "ready" ? (
                  <>
                    {ref.pointer}: the save pins <span className="hash">{shortHash(text.version)}</span>
                  </>
                ) : text?.state === "problem" ? (
                  <span className="include-problem">{text.problem}</span>
                ) : (
                  "…"
                )}
              </span>
              <Link to={promptHref(editing.projectId, ref.prompt)} className="include-open">
                Open {ref.prompt}
              </Link>
            </li>
          );
        })}
      </ul>
      <details className="include-preview">
        <summary>Preview with includes expanded{waiting ? " (loading…)" : ""}</summary>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex lint/a11y/useSemanticElements: a long text scrolls here, so the keyboard must reach it (axe: scrollable-region-focusable); a named region, as the pre is the scroll box */}
        <pre className="include-expanded" tabIndex={0} role="region" aria-label="Section with includes expanded">
          <ChunkedText text={expanded} />
        </pre>
      </details>
    </div>
  );
}
