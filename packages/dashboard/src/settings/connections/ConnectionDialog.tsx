import { useState } from "react";
import {
  type ModelConnection,
  type UpdateConnectionBody,
  useAddConnection,
  useUpdateConnection,
} from "../../api/connection-queries";
import { errorFor, type FieldError } from "../../api/errors";
import { FormDialog } from "../../ui/Dialog";
import { Field, TextField } from "../../ui/Field";
import { fieldErrorOf } from "../../ui/States";

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

/** Whether an edited base URL leaves the stored one's origin (scheme, host, port): the server then wants the key again. */
export function originChanged(before: string, after: string): boolean {
  try {
    return new URL(before).origin !== new URL(after.trim()).origin;
  } catch {
    return false;
  }
}

/** The fields of an edit that differ from the connection as it is: an unchanged field is not sent. */
export function changesOf(
  before: ModelConnection,
  after: { name: string; baseUrl: string; models: string[]; apiKey: string; removeKey: boolean },
): UpdateConnectionBody {
  const body: UpdateConnectionBody = {};
  if (after.name !== before.name) body.name = after.name;
  if (after.baseUrl !== before.base_url) body.base_url = after.baseUrl;
  if (after.models.join("\n") !== before.models.join("\n")) body.models = after.models;
  if (after.apiKey !== "") body.api_key = after.apiKey;
  else if (after.removeKey) body.api_key = "";
  return body;
}

/**
 * Adds a connection, or edits one (`editing`). The API key goes to the server once, in this request, and is
 * never shown again: the input is a password field, and the form forgets it as soon as the server has it.
 * Editing shows the stored key as kept unless a new one is typed or its removal is ticked.
 */
export function ConnectionDialog({
  projectId,
  editing,
  onClose,
}: {
  projectId: string;
  editing?: ModelConnection | undefined;
  onClose: () => void;
}) {
  const add = useAddConnection(projectId);
  const update = useUpdateConnection(projectId);
  const pending = add.isPending || update.isPending;
  const [name, setName] = useState(editing?.name ?? "");
  const [baseUrl, setBaseUrl] = useState(editing?.base_url ?? "");
  const [apiKey, setApiKey] = useState("");
  const [removeKey, setRemoveKey] = useState(false);
  const [models, setModels] = useState(editing?.models.join(", ") ?? "");
  const [errors, setErrors] = useState<FieldError[]>([]);

  const submit = () => {
    const problems: FieldError[] = [];
    if (name.trim() === "") problems.push({ field: "name", message: "is required" });
    if (baseUrl.trim() === "") problems.push({ field: "base_url", message: "is required" });
    if (problems.length > 0) return setErrors(problems);
    setErrors([]);
    const list = parseModels(models);
    const done = {
      onSuccess: () => {
        setApiKey("");
        onClose();
      },
      onError: (error: unknown) => setErrors([fieldErrorOf(error)]),
    };
    if (editing) {
      const body = changesOf(editing, { name: name.trim(), baseUrl: baseUrl.trim(), models: list, apiKey, removeKey });
      // Nothing changed: the server would refuse an empty edit, and there is nothing to save.
      if (Object.keys(body).length === 0) return onClose();
      update.mutate({ id: editing.id, body }, done);
      return;
    }
    add.mutate(
      {
        name: name.trim(),
        base_url: baseUrl.trim(),
        ...(apiKey === "" ? {} : { api_key: apiKey }),
        ...(list.length === 0 ? {} : { models: list }),
      },
      done,
    );
  };

  return (
    <FormDialog
      title={editing ? `Edit ${editing.name}` : "Add a model connection"}
      name="Model connection"
      errors={errors}
      shows={(f) => FORM_FIELDS.has(f) || f.startsWith("models")}
      submitLabel={editing ? "Save changes" : "Add connection"}
      pending={pending}
      onSubmit={submit}
      onClose={onClose}
    >
      <TextField
        label="Name"
        error={errorFor(errors, "name")}
        hint="How the playground lists it, e.g. OpenAI."
        value={name}
        onChange={setName}
        data-autofocus
      />
      <TextField
        label="Base URL"
        error={errorFor(errors, "base_url")}
        hint="An OpenAI-compatible API: OpenAI, Azure OpenAI, OpenRouter, Groq, Together, vLLM, Ollama, LM Studio. A server on this machine or its network (Ollama at http://127.0.0.1:11434/v1) is refused unless the server is started with PROMPTSTORE_MODEL_ALLOW_PRIVATE=true."
        type="url"
        placeholder="https://api.openai.com/v1"
        value={baseUrl}
        onChange={setBaseUrl}
      />
      <TextField
        label={editing?.has_key ? "New API key" : "API key"}
        optional
        error={errorFor(errors, "api_key")}
        hint={
          editing?.has_key && originChanged(editing.base_url, baseUrl)
            ? "The base URL moves to another host: the stored key stays with the old one. Type the key for the new address, or remove the stored key."
            : editing?.has_key
              ? "A key is stored, encrypted; it is never shown. Leave this empty to keep it, or type one to replace it."
              : "Kept encrypted on the server and never shown again, to anyone. Local servers may need none."
        }
        mono
        type="password"
        autoComplete="new-password"
        spellCheck={false}
        value={apiKey}
        disabled={removeKey}
        onChange={setApiKey}
      />
      {editing?.has_key ? (
        <label className="checkbox">
          <input type="checkbox" checked={removeKey} onChange={(e) => setRemoveKey(e.target.checked)} />
          Remove the stored key (for a local server that needs none)
        </label>
      ) : null}
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
    </FormDialog>
  );
}
