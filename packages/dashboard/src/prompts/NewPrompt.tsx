import { can } from "@promptstore/core/accounts/permissions";
import { slugify } from "@promptstore/core/prompts/slug";
import { createPromptBody } from "@promptstore/core/schemas";
import { type FormEvent, useId, useRef, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { isApiError } from "../api/client";
import { errorFor, errorWithin, type FieldError, sectionField, unplacedErrors } from "../api/errors";
import { useCreatePrompt } from "../api/queries";
import { type DraftSection, draftSection, sectionsBody } from "../forms/sections";
import { useRevealErrors } from "../forms/useRevealErrors";
import { validate } from "../forms/validate";
import { useProject } from "../shell/session";
import { Field, FormAlert } from "../ui/Field";
import { shortHash } from "../ui/format";
import { EmptyState, errorText } from "../ui/States";
import "./prompts.css";

type ContentForm = "sections" | "markdown";

const SHOWN_FIELDS = new Set(["name", "description", "id", "markdown", "sections", "message"]);
const isShown = (field: string) => SHOWN_FIELDS.has(field) || sectionField(field) !== null;

const MARKDOWN_EXAMPLE = "# Role\nYou are a support assistant for {{ product }}.\n\n# Rules\nAnswer briefly.";

export default function NewPrompt() {
  const { projectId = "" } = useParams();
  const context = useProject();
  const navigate = useNavigate();
  const create = useCreatePrompt(projectId);
  const formId = useId();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [id, setId] = useState("");
  const [form, setForm] = useState<ContentForm>("sections");
  const [sections, setSections] = useState<DraftSection[]>(() => [draftSection({ title: "Instructions" })]);
  const [markdown, setMarkdown] = useState("");
  const [message, setMessage] = useState("");
  const [publish, setPublish] = useState(false);
  const [errors, setErrors] = useState<FieldError[]>([]);
  const formRef = useRef<HTMLFormElement>(null);
  useRevealErrors(formRef, errors);

  if (context && !can(context.role, "write")) {
    return (
      <div className="card">
        <h1 className="visually-hidden">New prompt</h1>
        <EmptyState title="You cannot create prompts here">
          <p>Viewers can read prompts; ask an owner to make you an editor.</p>
        </EmptyState>
      </div>
    );
  }

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = validate(createPromptBody, {
      name,
      ...(description.trim() === "" ? {} : { description }),
      ...(id.trim() === "" ? {} : { id: id.trim() }),
      ...(form === "sections" ? { sections: sectionsBody(sections) } : { markdown }),
      ...(message.trim() === "" ? {} : { message }),
      publish,
    });
    if (!body.ok) {
      setErrors(body.errors);
      return;
    }
    setErrors([]);
    create.mutate(body.data, {
      onSuccess: (created) =>
        navigate(`/p/${projectId}/prompts/${encodeURIComponent(created.id)}`, {
          state: {
            notice: `Created “${created.name}”: version ${shortHash(created.version)}${created.published ? ", published to production" : ""}.`,
          },
        }),
      onError: (error) =>
        setErrors([
          isApiError(error)
            ? { field: error.field, message: error.detail }
            : { field: null, message: errorText(error) },
        ]),
    });
  };

  const sectionError = (index: number, part: string) => errorFor(errors, `sections[${index}].${part}`);
  const update = (key: number, change: Partial<DraftSection>) =>
    setSections((list) => list.map((s) => (s.key === key ? { ...s, ...change } : s)));

  return (
    <div className="stack-lg narrow-wide">
      <title>New prompt — Promptstore</title>
      <header className="page-header">
        <div>
          <nav className="breadcrumb" aria-label="Breadcrumb">
            <Link to={`/p/${projectId}/prompts`}>Prompts</Link>
            <span aria-hidden="true">/</span>
          </nav>
          <h1>New prompt</h1>
        </div>
      </header>
      <form
        ref={formRef}
        className="form content-form card card-body"
        onSubmit={submit}
        noValidate
        aria-labelledby={formId}
      >
        <h2 id={formId} className="visually-hidden">
          Prompt details
        </h2>
        <FormAlert messages={unplacedErrors(errors, isShown)} />
        <Field label="Name" error={errorFor(errors, "name")}>
          {(control) => (
            <input
              {...control}
              className="input"
              value={name}
              onChange={(e) => setName(e.target.value)}
              autoComplete="off"
            />
          )}
        </Field>
        <Field label="Description" optional error={errorFor(errors, "description")}>
          {(control) => (
            <textarea
              {...control}
              className="textarea"
              rows={2}
              value={description}
              onChange={(e) => setDescription(e.target.value)}
            />
          )}
        </Field>
        <Field
          label="ID"
          optional
          error={errorFor(errors, "id")}
          hint={
            <>
              How applications read it: <code>/api/v2/prompts/{id.trim() || slugify(name)}</code>. Leave empty to derive
              it from the name. It cannot be changed later.
            </>
          }
        >
          {(control) => (
            <input
              {...control}
              className="input mono"
              value={id}
              placeholder={slugify(name)}
              onChange={(e) => setId(e.target.value)}
              autoComplete="off"
              spellCheck={false}
            />
          )}
        </Field>

        <fieldset>
          <legend>Content</legend>
          <div className="segmented">
            <label>
              <input
                type="radio"
                name="content-form"
                checked={form === "sections"}
                onChange={() => setForm("sections")}
              />
              Section by section
            </label>
            <label>
              <input
                type="radio"
                name="content-form"
                checked={form === "markdown"}
                onChange={() => setForm("markdown")}
              />
              Paste all at once
            </label>
          </div>
        </fieldset>

        {form === "sections" ? (
          <div className="stack">
            {errorFor(errors, "sections") ? (
              <p className="field-error" role="alert">
                {errorFor(errors, "sections")}
              </p>
            ) : null}
            {sections.map((section, index) => (
              <fieldset key={section.key} className="section-card">
                <legend className="visually-hidden">Section {index + 1}</legend>
                <div className="section-card-head">
                  <span className="section-card-label" aria-hidden="true">
                    Section {index + 1}
                  </span>
                  {sections.length > 1 ? (
                    <button
                      type="button"
                      className="button button-ghost button-small"
                      onClick={() => setSections((list) => list.filter((s) => s.key !== section.key))}
                      aria-label={`Remove section ${index + 1}`}
                    >
                      Remove
                    </button>
                  ) : null}
                </div>
                <Field label="Title" error={sectionError(index, "title")}>
                  {(control) => (
                    <input
                      {...control}
                      className="input"
                      value={section.title}
                      onChange={(e) => update(section.key, { title: e.target.value })}
                      autoComplete="off"
                    />
                  )}
                </Field>
                <Field
                  label="Content"
                  error={sectionError(index, "content")}
                  hint={
                    index === 0 ? "Write {{ name }} where a value is filled in when the prompt is used." : undefined
                  }
                >
                  {(control) => (
                    <textarea
                      {...control}
                      className="textarea mono"
                      rows={6}
                      value={section.content}
                      onChange={(e) => update(section.key, { content: e.target.value })}
                    />
                  )}
                </Field>
              </fieldset>
            ))}
            <div>
              <button type="button" className="button" onClick={() => setSections((list) => [...list, draftSection()])}>
                Add section
              </button>
            </div>
          </div>
        ) : (
          <Field
            label="Markdown"
            error={errorWithin(errors, "markdown")?.message}
            hint={
              <>
                Each level-1 heading (<code># Title</code>) starts a section; the text under it is the section's
                content.
              </>
            }
          >
            {(control) => (
              <textarea
                {...control}
                className="textarea mono"
                rows={14}
                value={markdown}
                placeholder={MARKDOWN_EXAMPLE}
                onChange={(e) => setMarkdown(e.target.value)}
              />
            )}
          </Field>
        )}

        <Field label="Change message" optional error={errorFor(errors, "message")}>
          {(control) => (
            <input
              {...control}
              className="input"
              value={message}
              placeholder="No message"
              onChange={(e) => setMessage(e.target.value)}
            />
          )}
        </Field>
        <label className="checkbox">
          <input type="checkbox" checked={publish} onChange={(e) => setPublish(e.target.checked)} />
          Publish this first version to production
        </label>
        <div className="form-actions">
          <button
            type="submit"
            className="button button-primary"
            disabled={create.isPending}
            aria-busy={create.isPending || undefined}
          >
            {create.isPending ? "Creating…" : "Create prompt"}
          </button>
          <Link to={`/p/${projectId}/prompts`} className="button button-ghost">
            Cancel
          </Link>
        </div>
      </form>
    </div>
  );
}
