import { useLayoutEffect, useRef, useState } from "react";
import { errorFor, type FieldError } from "../api/errors";
import { type DraftSection, draftSection, moveItem } from "../forms/sections";
import { ConfirmDialog } from "../ui/Dialog";
import { SectionEditor } from "./SectionEditor";

/** The focused element, looking into shadow roots (the content editors live in one). */
function deepActiveElement(): HTMLElement | null {
  let active = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return active instanceof HTMLElement ? active : null;
}

/** The draft's sections: edited, moved, added and removed, with focus kept and each move announced. */
export function SectionList({
  headingId,
  sections,
  readOnly,
  errors,
  setSections,
}: {
  headingId: string;
  sections: DraftSection[];
  readOnly: boolean;
  errors: FieldError[];
  setSections: (update: (sections: DraftSection[]) => DraftSection[]) => void;
}) {
  const [announcement, setAnnouncement] = useState("");
  const [removing, setRemoving] = useState<DraftSection | null>(null);
  const restoreFocus = useRef<HTMLElement | null>(null);
  const focusTitleOf = useRef<number | null>(null);

  // Moving a section re-inserts its DOM node, which drops focus; put it back where it was.
  useLayoutEffect(() => {
    const element = restoreFocus.current;
    if (element) {
      restoreFocus.current = null;
      if (element.isConnected && deepActiveElement() !== element) element.focus();
    }
    const key = focusTitleOf.current;
    if (key !== null) {
      focusTitleOf.current = null;
      document.querySelector<HTMLElement>(`[data-section-key="${key}"] [data-section-title]`)?.focus();
    }
  });

  const move = (index: number, delta: -1 | 1) => {
    const target = index + delta;
    const section = sections[index];
    if (!section || target < 0 || target >= sections.length) return;
    restoreFocus.current = deepActiveElement();
    setSections((list) => moveItem(list, index, target));
    setAnnouncement(`Moved “${section.title || "untitled"}” to position ${target + 1} of ${sections.length}.`);
  };

  const remove = (section: DraftSection) => {
    setSections((list) => list.filter((s) => s.key !== section.key));
    setRemoving(null);
    setAnnouncement(`Removed section “${section.title || "untitled"}”.`);
  };

  const add = () => {
    const section = draftSection({ title: "" });
    focusTitleOf.current = section.key;
    setSections((list) => [...list, section]);
  };

  const sectionsError = errorFor(errors, "sections");

  return (
    <>
      <section className="stack" aria-labelledby={`${headingId}-sections`}>
        <div className="section-list-head">
          <div>
            <h3 id={`${headingId}-sections`}>Sections</h3>
            <p className="field-hint">
              Assembled in this order, each as <code>{"<Title>…</Title>"}</code>.
              {readOnly ? "" : " Alt+↑ and Alt+↓ move the section you are in."}
            </p>
          </div>
        </div>
        {sectionsError ? (
          <p className="field-error" role="alert">
            {sectionsError}
          </p>
        ) : null}
        {sections.map((section, index) => (
          <SectionEditor
            key={section.key}
            section={section}
            index={index}
            count={sections.length}
            readOnly={readOnly}
            titleError={errorFor(errors, `sections[${index}].title`)}
            contentError={errorFor(errors, `sections[${index}].content`)}
            onChange={(change) =>
              setSections((list) => list.map((s) => (s.key === section.key ? { ...s, ...change } : s)))
            }
            onMove={(delta) => move(index, delta)}
            onRemove={() => (section.content.trim() === "" ? remove(section) : setRemoving(section))}
          />
        ))}
        {readOnly ? null : (
          <div>
            <button type="button" className="button" onClick={add}>
              Add section
            </button>
          </div>
        )}
        <p className="visually-hidden" role="status">
          {announcement}
        </p>
      </section>

      {removing ? (
        <ConfirmDialog
          title="Remove this section?"
          confirmLabel="Remove section"
          danger
          onConfirm={() => remove(removing)}
          onClose={() => setRemoving(null)}
        >
          <p>
            “{removing.title || "Untitled"}” and its content leave the draft. Nothing is lost until you save: versions
            already saved keep it.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
