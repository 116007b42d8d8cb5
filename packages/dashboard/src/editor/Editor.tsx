import { can } from "@promptstore/core/permissions";
import { saveVersionBody } from "@promptstore/core/schemas";
import type { PromptView } from "@promptstore/core/views";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from "react";
import { useBlocker, useLocation, useParams } from "react-router";
import { isApiError } from "../api/client";
import { errorFor, errorWithin, type FieldError, sectionField, unplacedErrors } from "../api/errors";
import { keys, promptViewQuery, useSaveVersion } from "../api/queries";
import { type DraftSection, draftSection, moveItem, sectionsBody } from "../forms/sections";
import { useRevealErrors } from "../forms/useRevealErrors";
import { validate } from "../forms/validate";
import { useProject } from "../shell/session";
import { ConfirmDialog } from "../ui/Dialog";
import { Field, FormAlert } from "../ui/Field";
import { shortHash } from "../ui/format";
import { ErrorState, errorText, Loading } from "../ui/States";
import { LazyCodeEditor } from "./LazyCodeEditor";
import { clearDraft, peekDraft, stashDraft } from "./rescue";
import { SectionEditor } from "./SectionEditor";
import { checkTools, toolsText } from "./tools";

/** The Edit tab: edits a copy of the latest version and saves it as a new one. */
export default function Editor() {
  const { projectId = "", promptId = "" } = useParams();
  const latest = useQuery(promptViewQuery(projectId, promptId, "latest", false));
  if (latest.isPending) return <Loading label="Loading the latest version…" />;
  if (latest.isError) return <ErrorState error={latest.error} onRetry={() => latest.refetch()} />;
  // Keyed by prompt only: a refetch after saving must not throw away what is being typed.
  return <EditorForm key={promptId} projectId={projectId} initial={latest.data} />;
}

interface Draft {
  name: string;
  description: string;
  sections: DraftSection[];
  tools: string;
}

/** The focused element, looking into shadow roots (the content editors live in one). */
function deepActiveElement(): HTMLElement | null {
  let active = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return active instanceof HTMLElement ? active : null;
}

const snapshot = (draft: Draft) =>
  JSON.stringify([draft.name, draft.description, sectionsBody(draft.sections), draft.tools]);

type Notice = { kind: "success" | "info"; text: string };

const SHOWN = new Set(["name", "description", "sections", "message"]);
const isShown = (field: string) =>
  SHOWN.has(field) ||
  field === "tools" ||
  field.startsWith("tools[") ||
  sectionField(field)?.part === "title" ||
  sectionField(field)?.part === "content";

function EditorForm({ projectId, initial }: { projectId: string; initial: PromptView }) {
  const context = useProject();
  const location = useLocation();
  const readOnly = !context || !can(context.role, "write");
  const save = useSaveVersion(projectId, initial.id);
  const headingId = useId();

  const client = useQueryClient();
  const [rescued] = useState(() => peekDraft(projectId, initial.id, initial.version));
  const [draft, setDraft] = useState<Draft>(() => ({
    name: rescued?.name ?? initial.name,
    description: rescued?.description ?? initial.description,
    sections: (rescued?.sections ?? initial.sections).map((s) => draftSection(s)),
    tools: rescued?.tools ?? toolsText(initial.tools),
  }));
  const [baseline, setBaseline] = useState(() =>
    JSON.stringify([initial.name, initial.description, sectionsBody(initial.sections), toolsText(initial.tools)]),
  );
  const [startedFrom, setStartedFrom] = useState(initial.version);
  // The latest version this edit builds on: a save from a stale base is refused (409) instead of replacing
  // a colleague's version. Saving identical content makes no version, so it leaves the base where it is.
  const [base, setBase] = useState(initial.version);
  const [message, setMessage] = useState(rescued?.message ?? "");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const formRef = useRef<HTMLFormElement>(null);
  useRevealErrors(formRef, errors);
  const [notice, setNotice] = useState<Notice | null>(() => {
    if (rescued) return { kind: "info", text: "Restored the changes you had not saved when your session ended." };
    const text = (location.state as { notice?: unknown } | null)?.notice;
    return typeof text === "string" ? { kind: "success", text } : null;
  });
  const [announcement, setAnnouncement] = useState("");
  const [removing, setRemoving] = useState<DraftSection | null>(null);
  const restoreFocus = useRef<HTMLElement | null>(null);
  const focusTitleOf = useRef<number | null>(null);

  const dirty = snapshot(draft) !== baseline;
  const tools = useMemo(() => checkTools(draft.tools), [draft.tools]);

  // If the editor closes because the session ended, keep the draft for after signing back in.
  const latest = useRef({ draft, dirty, message, startedFrom });
  latest.current = { draft, dirty, message, startedFrom };
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once; reads the latest values through the ref
  useEffect(() => {
    clearDraft(projectId, initial.id);
    return () => {
      const last = latest.current;
      if (!last.dirty || client.getQueryData(keys.session) !== null) return;
      stashDraft(projectId, initial.id, {
        version: last.startedFrom,
        name: last.draft.name,
        description: last.draft.description,
        sections: sectionsBody(last.draft.sections),
        tools: last.draft.tools,
        message: last.message,
      });
    };
  }, []);

  // Leaving with unsaved changes asks first: inside the app through the router, and on reload or close.
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      dirty &&
      currentLocation.pathname !== nextLocation.pathname &&
      // The prompt was just deleted (DeletePromptDialog): there is nothing left to save the edits to.
      (nextLocation.state as { deleted?: unknown } | null)?.deleted !== true,
  );
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      event.returnValue = "";
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

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

  const setSections = (update: (sections: DraftSection[]) => DraftSection[]) =>
    setDraft((d) => ({ ...d, sections: update(d.sections) }));

  const move = (index: number, delta: -1 | 1) => {
    const target = index + delta;
    const section = draft.sections[index];
    if (!section || target < 0 || target >= draft.sections.length) return;
    restoreFocus.current = deepActiveElement();
    setSections((list) => moveItem(list, index, target));
    setAnnouncement(`Moved “${section.title || "untitled"}” to position ${target + 1} of ${draft.sections.length}.`);
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

  const submit = (publish: boolean) => {
    if (readOnly || save.isPending || !tools.ok) return;
    setNotice(null);
    const body = validate(saveVersionBody, {
      name: draft.name,
      description: draft.description,
      sections: sectionsBody(draft.sections),
      tools: tools.tools,
      ...(message.trim() === "" ? {} : { message }),
      publish,
      base_version: base,
    });
    if (!body.ok) {
      setErrors(body.errors);
      return;
    }
    setErrors([]);
    const saved = snapshot(draft);
    save.mutate(body.data, {
      onSuccess: (result) => {
        setBaseline(saved);
        setStartedFrom(result.version);
        if (result.created) setBase(result.version);
        setMessage("");
        const published = result.published ? " It is now in production." : "";
        setNotice(
          result.created
            ? { kind: "success", text: `Saved version ${shortHash(result.version)}.${published}` }
            : {
                kind: "info",
                text: `No new version was made: this content is identical to version ${shortHash(result.version)}.${published}`,
              },
        );
      },
      onError: (error) =>
        setErrors([
          isApiError(error)
            ? { field: error.field, message: error.detail }
            : { field: null, message: errorText(error) },
        ]),
    });
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    submit(false);
  };

  const toolsError = !tools.ok ? tools.error : errorWithin(errors, "tools");
  const toolsMessage =
    typeof toolsError === "string" ? toolsError : toolsError ? `${toolsError.field}: ${toolsError.message}` : null;
  const sectionsError = errorFor(errors, "sections");
  const origin =
    startedFrom === initial.version
      ? `version ${shortHash(startedFrom)}, the latest${initial.production_version === startedFrom ? " and the one in production" : ""}`
      : `version ${shortHash(startedFrom)}, saved here`;

  return (
    <form
      ref={formRef}
      className="editor"
      onSubmit={onSubmit}
      noValidate
      aria-labelledby={headingId}
      onKeyDown={(event) => {
        // Ctrl+S / Cmd+S saves, as in any editor, instead of saving the page.
        if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
          event.preventDefault();
          submit(false);
        }
      }}
    >
      <h2 id={headingId} className="visually-hidden">
        Edit
      </h2>
      <p className="editor-origin muted small">
        {readOnly ? "Read-only: your role can read this prompt but not change it. " : ""}
        Showing {origin}.{dirty ? <span className="badge badge-warning">Unsaved changes</span> : null}
      </p>
      <div aria-live="polite">
        {notice ? (
          <p className={notice.kind === "success" ? "notice notice-success" : "notice"} role="status">
            {notice.text}
          </p>
        ) : null}
      </div>
      <FormAlert messages={unplacedErrors(errors, isShown)} />

      <section className="card card-body stack" aria-labelledby={`${headingId}-details`}>
        <h3 id={`${headingId}-details`}>Details</h3>
        <p className="field-hint">The name and description belong to the prompt, not to a version.</p>
        <Field label="Name" error={errorFor(errors, "name")}>
          {(control) => (
            <input
              {...control}
              className="input"
              value={draft.name}
              readOnly={readOnly}
              onChange={(e) => setDraft((d) => ({ ...d, name: e.target.value }))}
              autoComplete="off"
            />
          )}
        </Field>
        <Field label="Description" error={errorFor(errors, "description")}>
          {(control) => (
            <textarea
              {...control}
              className="textarea"
              rows={2}
              value={draft.description}
              readOnly={readOnly}
              onChange={(e) => setDraft((d) => ({ ...d, description: e.target.value }))}
            />
          )}
        </Field>
      </section>

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
        {draft.sections.map((section, index) => (
          <SectionEditor
            key={section.key}
            section={section}
            index={index}
            count={draft.sections.length}
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

      <section className="card card-body stack" aria-labelledby={`${headingId}-tools`}>
        <div>
          <h3 id={`${headingId}-tools`}>Tools</h3>
          <p className="field-hint" id={`${headingId}-tools-hint`}>
            Function tools for the model, as a JSON array of{" "}
            <code>{'{ "type": "function", "function": { "name", "description", "parameters" } }'}</code>. Use{" "}
            <code>[]</code> for none.
          </p>
        </div>
        <LazyCodeEditor
          value={draft.tools}
          onChange={(value) => setDraft((d) => ({ ...d, tools: value }))}
          language="json"
          label="Tools (JSON)"
          readOnly={readOnly}
          invalid={toolsMessage !== null}
          description={toolsMessage ?? "A JSON array of function tools; [] for none."}
        />
        <p id={`${headingId}-tools-status`} className={toolsMessage ? "field-error" : "field-hint"} aria-live="polite">
          {toolsMessage ??
            (tools.ok
              ? `Valid: ${tools.tools.length === 0 ? "no tools" : `${tools.tools.length} tool${tools.tools.length === 1 ? "" : "s"}`}.`
              : "")}
        </p>
      </section>

      {readOnly ? null : (
        <div className="save-bar">
          <Field label="Change message" optional error={errorFor(errors, "message")} className="save-message">
            {(control) => (
              <input
                {...control}
                className="input"
                value={message}
                placeholder="What changed, for the history"
                onChange={(e) => setMessage(e.target.value)}
              />
            )}
          </Field>
          <div className="save-actions">
            <button
              type="submit"
              className="button"
              disabled={save.isPending || !tools.ok}
              aria-busy={save.isPending || undefined}
            >
              Save version
            </button>
            <button
              type="button"
              className="button button-primary"
              disabled={save.isPending || !tools.ok}
              onClick={() => submit(true)}
            >
              Save and publish
            </button>
          </div>
        </div>
      )}

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

      {blocker.state === "blocked" ? (
        <ConfirmDialog
          title="Leave without saving?"
          confirmLabel="Leave"
          cancelLabel="Stay"
          danger
          onConfirm={() => blocker.proceed()}
          onClose={() => blocker.reset()}
        >
          <p>Your changes to this prompt are not saved. If you leave, they are discarded.</p>
        </ConfirmDialog>
      ) : null}
    </form>
  );
}
