import { can } from "@promptstore/core/accounts/permissions";
import { saveVersionBody } from "@promptstore/core/schemas";
import type { PromptView } from "@promptstore/core/views";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, memo, Suspense, useId, useMemo, useRef, useState } from "react";
import { useLocation, useParams } from "react-router";
import { isApiError } from "../api/client";
import { type FieldError, sectionField, unplacedErrors } from "../api/errors";
import { promptViewQuery, useSaveVersion } from "../api/queries";
import { type DraftSection, draftSection, sectionsBody } from "../forms/sections";
import { useRevealErrors } from "../forms/useRevealErrors";
import { validate } from "../forms/validate";
import { IncludeEditingContext, useIncludeEditing } from "../includes/include-help";
import { useProject } from "../shell/session";
import { ConfirmDialog } from "../ui/Dialog";
import { FormAlert } from "../ui/Field";
import { shortHash } from "../ui/format";
import { preloadable } from "../ui/preloadable";
import { ErrorState, errorText, Loading } from "../ui/States";
import { preloadCodeEditor } from "./code/LazyCodeEditor";
import { DetailsCard } from "./DetailsCard";
import { useCarryDraft, useDraftRescue, useLeaveGuard } from "./editor-hooks";
import { heldDraft } from "./held-draft";
import { asWritten, keptPins } from "./kept-pins";
import { ModelSettingsCard } from "./ModelSettingsCard";
import { checkModel, modelText } from "./model-settings";
import { peekDraft } from "./rescue";
import { SaveBar } from "./SaveBar";
import { SectionList } from "./SectionList";
import { ToolsCard } from "./ToolsCard";
import { checkTools, toolsText } from "./tools";

// The playground (its streaming, examples and forms) is a chunk of its own. Memo: it renders again when the
// draft changes, not with every render of the form (typing the change message, say).
const Playground = memo(preloadable(() => import("../playground/Playground")));

/** The parts this screen shows at once, fetched by the router with its code. */
export const preload = () => Promise.all([preloadCodeEditor(), Playground.type.preload()]);

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
  /** The model settings as typed (JSON); empty for none. */
  model: string;
}

/** What "unsaved changes" compares: the draft without the sections' keys. */
type Snapshot = Omit<Draft, "sections"> & { sections: ReturnType<typeof sectionsBody> };

const snapshot = (draft: Draft): Snapshot => ({ ...draft, sections: sectionsBody(draft.sections) });

/**
 * Field by field, not as JSON: this runs on every keystroke, and stringifying a 250 KB prompt each time
 * cost more than the typing itself. Equal strings compare by a memory comparison, far cheaper.
 */
const sameDraft = (draft: Draft, saved: Snapshot) =>
  draft.name === saved.name &&
  draft.description === saved.description &&
  draft.tools === saved.tools &&
  draft.model === saved.model &&
  draft.sections.length === saved.sections.length &&
  draft.sections.every((s, i) => {
    const other = saved.sections[i];
    return other !== undefined && s.title === other.title && s.content === other.content && s.enabled === other.enabled;
  });

type Notice = { kind: "success" | "info"; text: string };

const SHOWN = new Set(["name", "description", "sections", "message"]);
const isShown = (field: string) =>
  SHOWN.has(field) ||
  field === "tools" ||
  field.startsWith("tools[") ||
  field === "model" ||
  field.startsWith("model.") ||
  sectionField(field)?.part === "title" ||
  sectionField(field)?.part === "content";

function EditorForm({ projectId, initial }: { projectId: string; initial: PromptView }) {
  const context = useProject();
  const location = useLocation();
  const readOnly = !context || !can(context.role, "write");
  const save = useSaveVersion(projectId, initial.id);
  const headingId = useId();

  // The draft carried back from the Evaluate tab (held-draft.ts), else one kept when a session ended.
  const [carried] = useState(() => {
    const held = heldDraft(projectId, initial.id);
    return held !== null && held.version === initial.version ? held : null;
  });
  const [rescued] = useState(() => carried ?? peekDraft(projectId, initial.id, initial.version));
  const [draft, setDraft] = useState<Draft>(() => ({
    name: rescued?.name ?? initial.name,
    description: rescued?.description ?? initial.description,
    sections: (rescued?.sections ?? initial.sections.map(asWritten)).map((s) => draftSection(s)),
    tools: rescued?.tools ?? toolsText(initial.tools),
    model: rescued?.model ?? modelText(initial.model),
  }));
  const [baseline, setBaseline] = useState<Snapshot>(() => ({
    name: initial.name,
    description: initial.description,
    sections: sectionsBody(initial.sections.map(asWritten)),
    tools: toolsText(initial.tools),
    model: modelText(initial.model),
  }));
  const [startedFrom, setStartedFrom] = useState(initial.version);
  // The latest version this edit builds on: a save from a stale base is refused (409) instead of replacing
  // a colleague's version. Saving identical content makes no version, so it leaves the base where it is.
  const [base, setBase] = useState(initial.version);
  const [message, setMessage] = useState(rescued?.message ?? "");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const formRef = useRef<HTMLFormElement>(null);
  useRevealErrors(formRef, errors);
  const [notice, setNotice] = useState<Notice | null>(() => {
    if (carried) return null;
    if (rescued) return { kind: "info", text: "Restored the changes you had not saved when your session ended." };
    const text = (location.state as { notice?: unknown } | null)?.notice;
    return typeof text === "string" ? { kind: "success", text } : null;
  });

  const dirty = !sameDraft(draft, baseline);
  const tools = useMemo(() => checkTools(draft.tools), [draft.tools]);
  const model = useMemo(() => checkModel(draft.model), [draft.model]);
  const unsaved = () =>
    dirty
      ? {
          version: startedFrom,
          name: draft.name,
          description: draft.description,
          sections: sectionsBody(draft.sections),
          tools: draft.tools,
          model: draft.model,
          message,
        }
      : null;
  useDraftRescue(projectId, initial.id, unsaved);
  const carry = useCarryDraft(projectId, initial.id, unsaved);
  const blocker = useLeaveGuard(dirty, carry.carries, carry.onLeave);

  // The pins the save keeps: the chips and the list under each section show them.
  const pins = useMemo(() => keptPins(initial.includes, draft.sections) ?? {}, [initial.includes, draft.sections]);
  const includeEditing = useIncludeEditing(projectId, initial.id, pins);

  const setSections = (update: (sections: DraftSection[]) => DraftSection[]) =>
    setDraft((d) => ({ ...d, sections: update(d.sections) }));

  const submit = (publish: boolean) => {
    if (readOnly || save.isPending || !tools.ok || !model.ok) return;
    setNotice(null);
    const sections = sectionsBody(draft.sections);
    const pins = keptPins(initial.includes, sections);
    const body = validate(saveVersionBody, {
      name: draft.name,
      description: draft.description,
      sections,
      ...(pins === undefined ? {} : { includes: pins }),
      tools: tools.tools,
      // Empty settings are none: the version saved has no model settings.
      ...(model.model === undefined ? {} : { model: model.model }),
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

  const origin =
    startedFrom === initial.version
      ? `version ${shortHash(startedFrom)}, the latest${initial.production_version === startedFrom ? " and the one in production" : ""}`
      : `version ${shortHash(startedFrom)}, saved here`;

  const playgroundDraft = useMemo(
    () => ({
      sections: sectionsBody(draft.sections),
      ...(tools.ok ? { tools: tools.tools } : {}),
      ...(model.ok && model.model !== undefined ? { model: model.model } : {}),
    }),
    [draft.sections, tools, model],
  );

  return (
    <>
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

        <DetailsCard
          headingId={headingId}
          name={draft.name}
          description={draft.description}
          readOnly={readOnly}
          errors={errors}
          onChange={(change) => setDraft((d) => ({ ...d, ...change }))}
        />
        <IncludeEditingContext.Provider value={includeEditing}>
          <SectionList
            headingId={headingId}
            sections={draft.sections}
            readOnly={readOnly}
            errors={errors}
            setSections={setSections}
          />
        </IncludeEditingContext.Provider>
        <ToolsCard
          headingId={headingId}
          value={draft.tools}
          tools={tools}
          readOnly={readOnly}
          errors={errors}
          onChange={(value) => setDraft((d) => ({ ...d, tools: value }))}
        />
        <ModelSettingsCard
          headingId={headingId}
          value={draft.model}
          model={model}
          readOnly={readOnly}
          errors={errors}
          onChange={(value) => setDraft((d) => ({ ...d, model: value }))}
        />
        {readOnly ? null : (
          <SaveBar
            message={message}
            errors={errors}
            pending={save.isPending}
            disabled={save.isPending || !tools.ok || !model.ok}
            onMessage={setMessage}
            onPublish={() => submit(true)}
          />
        )}

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
      <Suspense fallback={<Loading label="Loading the playground…" />}>
        <Playground
          projectId={projectId}
          promptId={initial.id}
          draft={playgroundDraft}
          draftProblem={tools.ok ? (model.ok ? null : model.error) : tools.error}
        />
      </Suspense>
    </>
  );
}
