import { type FormEvent, useRef, useState } from "react";
import { isApiError } from "../../api/client";
import { useAddConnection } from "../../api/connection-queries";
import { errorFor, type FieldError, unplacedErrors } from "../../api/errors";
import { useRevealErrors } from "../../forms/useRevealErrors";
import { Dialog } from "../../ui/Dialog";
import { Field, FormAlert } from "../../ui/Field";
import { errorText } from "../../ui/States";

const FORM_FIELDS = new Set(["name", "base_url", "api_key", "models"]);

/** "gpt-4o-mini, gpt-4o" or one per line → the list; blanks and repeats dropped. */
export function parseModels(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\n,]/)
        .map((m) => m.trim())
        .filter((m) => m !== ""),
    ),
  ];
}

/**
 * Adds a connection. The API key goes to the server once, in this request, and is never shown again: the
 * input is a password field, and the form forgets it as soon as the server has it.
 */
export function ConnectionDialog({ projectId, onClose }: { projectId: string; onClose: () => void }) {
  const add = useAddConnection(projectId);
  const [name, setName] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [models, setModels] = useState("");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const form = useRef<HTMLFormElement>(null);
  useRevealErrors(form, errors);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems: FieldError[] = [];
    if (name.trim() === "") problems.push({ field: "name", message: "is required" });
    if (baseUrl.trim() === "") problems.push({ field: "base_url", message: "is required" });
    if (problems.length > 0) return setErrors(problems);
    setErrors([]);
    const list = parseModels(models);
    add.mutate(
      {
        name: name.trim(),
        base_url: baseUrl.trim(),
        ...(apiKey === "" ? {} : { api_key: apiKey }),
        ...(list.length === 0 ? {} : { models: list }),
      },
      {
        onSuccess: () => {
          setApiKey("");
          onClose();
        },
        onError: (error) =>
          setErrors([
            isApiError(error)
              ? { field: error.field, message: error.detail }
              : { field: null, message: errorText(error) },
          ]),
      },
    );
  };

  return (
    <Dialog title="Add a model connection" onClose={onClose}>
      <form ref={form} className="form" onSubmit={submit} noValidate aria-label="Model connection">
        <FormAlert messages={unplacedErrors(errors, (f) => FORM_FIELDS.has(f) || f.startsWith("models"))} />
        <Field label="Name" error={errorFor(errors, "name")} hint="How the playground lists it, e.g. OpenAI.">
          {(control) => (
            <input
              {...control}
              className="input"
              autoComplete="off"
              value={name}
              onChange={(e) => setName(e.target.value)}
              data-autofocus
            />
          )}
        </Field>
        <Field
          label="Base URL"
          error={errorFor(errors, "base_url")}
          hint="An OpenAI-compatible API: OpenAI, Azure OpenAI, OpenRouter, Groq, Together, vLLM, Ollama, LM Studio."
        >
          {(control) => (
            <input
              {...control}
              className="input mono"
              type="url"
              inputMode="url"
              autoComplete="off"
              spellCheck={false}
              placeholder="https://api.openai.com/v1"
              value={baseUrl}
              onChange={(e) => setBaseUrl(e.target.value)}
            />
          )}
        </Field>
        <Field
          label="API key"
          optional
          error={errorFor(errors, "api_key")}
          hint="Kept encrypted on the server and never shown again, to anyone. Local servers may need none."
        >
          {(control) => (
            <input
              {...control}
              className="input mono"
              type="password"
              autoComplete="new-password"
              spellCheck={false}
              value={apiKey}
              onChange={(e) => setApiKey(e.target.value)}
            />
          )}
        </Field>
        <Field
          label="Models"
          optional
          error={errors.find((e) => e.field?.startsWith("models"))?.message}
          hint="The models offered in the playground, separated by commas or one per line."
        >
          {(control) => (
            <textarea
              {...control}
              className="textarea mono"
              rows={2}
              spellCheck={false}
              placeholder="gpt-4o-mini, gpt-4o"
              value={models}
              onChange={(e) => setModels(e.target.value)}
            />
          )}
        </Field>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={add.isPending}
            aria-busy={add.isPending || undefined}
          >
            Add connection
          </button>
        </div>
      </form>
    </Dialog>
  );
}
