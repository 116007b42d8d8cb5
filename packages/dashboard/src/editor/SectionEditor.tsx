import type { KeyboardEvent } from "react";
import type { DraftSection } from "../forms/sections";
import { useIncludeContext } from "../includes/include-help";
import { SectionIncludes } from "../includes/SectionIncludes";
import { Field } from "../ui/Field";
import { LazyCodeEditor } from "./code/LazyCodeEditor";

interface SectionEditorProps {
  section: DraftSection;
  index: number;
  count: number;
  readOnly: boolean;
  titleError?: string | undefined;
  contentError?: string | undefined;
  onChange: (change: Partial<DraftSection>) => void;
  onMove: (delta: -1 | 1) => void;
  onRemove: () => void;
}

/** One section: title, enabled, content, and the buttons (and Alt+Arrow keys) that move it. */
export function SectionEditor({
  section,
  index,
  count,
  readOnly,
  titleError,
  contentError,
  onChange,
  onMove,
  onRemove,
}: SectionEditorProps) {
  const number = index + 1;
  const first = index === 0;
  const last = index === count - 1;
  const errorId = `section-${section.key}-content-error`;
  const includes = useIncludeContext();

  const onKeyDown = (event: KeyboardEvent) => {
    if (readOnly || !event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (event.key !== "ArrowUp" && event.key !== "ArrowDown") return;
    event.preventDefault();
    const delta = event.key === "ArrowUp" ? -1 : 1;
    if ((delta === -1 && !first) || (delta === 1 && !last)) onMove(delta);
  };

  return (
    <fieldset
      className={section.enabled ? "section" : "section section-disabled"}
      data-section-key={section.key}
      onKeyDown={onKeyDown}
    >
      <legend className="visually-hidden">
        Section {number}
        {section.title.trim() ? `: ${section.title}` : ""}
      </legend>
      <div className="section-head">
        <span className="section-number" aria-hidden="true">
          {number}
        </span>
        <Field label="Title" error={titleError} className="section-title">
          {(control) => (
            <input
              {...control}
              className="input"
              value={section.title}
              readOnly={readOnly}
              onChange={(e) => onChange({ title: e.target.value })}
              autoComplete="off"
              data-section-title
            />
          )}
        </Field>
        <label className="checkbox section-enabled">
          <input
            type="checkbox"
            checked={section.enabled}
            disabled={readOnly}
            onChange={(e) => onChange({ enabled: e.target.checked })}
          />
          Enabled
        </label>
        {readOnly ? null : (
          <div className="section-tools">
            <button
              type="button"
              className="button button-ghost button-small"
              aria-disabled={first}
              onClick={() => !first && onMove(-1)}
              title="Move up (Alt+↑)"
            >
              Move up
            </button>
            <button
              type="button"
              className="button button-ghost button-small"
              aria-disabled={last}
              onClick={() => !last && onMove(1)}
              title="Move down (Alt+↓)"
            >
              Move down
            </button>
            <button
              type="button"
              className="button button-ghost button-small section-remove"
              aria-disabled={count === 1}
              onClick={() => count > 1 && onRemove()}
              title={count === 1 ? "A prompt needs at least one section" : undefined}
            >
              Remove
            </button>
          </div>
        )}
      </div>
      <LazyCodeEditor
        value={section.content}
        onChange={(content) => onChange({ content })}
        language="markdown"
        label={`Content of section ${number}`}
        readOnly={readOnly}
        invalid={contentError !== undefined}
        description={contentError}
        placeholder="Write the section. {{ name }} marks a value filled in when the prompt is used."
        includes={includes?.help}
        pinsKey={includes ? JSON.stringify(includes.pins) : undefined}
      />
      {contentError ? (
        <p className="field-error" id={errorId}>
          {contentError}
        </p>
      ) : null}
      {includes ? <SectionIncludes content={section.content} editing={includes} /> : null}
      {section.enabled ? null : (
        <p className="field-hint">Disabled: kept in the version, left out of the assembled prompt.</p>
      )}
    </fieldset>
  );
}
