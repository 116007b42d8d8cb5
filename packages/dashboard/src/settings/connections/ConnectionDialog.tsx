import {
  type ModelConnection,
  type UpdateConnectionBody,
  useAddConnection,
  useUpdateConnection,
} from "../../api/connection-queries";
import type { FormField } from "../../forms/FormFields";
import { useForm } from "../../forms/useForm";
import { FormDialog } from "../../ui/Dialog";

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

type Values = { name: string; base_url: string; api_key: string; remove_key: boolean; models: string };

const NAME: FormField<Values> = {
  name: "name",
  label: "Name",
  hint: "How the playground lists it, e.g. OpenAI.",
  required: true,
  autofocus: true,
};
const BASE_URL: FormField<Values> = {
  name: "base_url",
  label: "Base URL",
  hint: "An OpenAI-compatible API: OpenAI, Azure OpenAI, OpenRouter, Groq, Together, vLLM, Ollama, LM Studio. A server on this machine or its network (Ollama at http://127.0.0.1:11434/v1) is refused unless the server is started with PROMPTSTORE_MODEL_ALLOW_PRIVATE=true.",
  type: "url",
  placeholder: "https://api.openai.com/v1",
  required: true,
};
const REMOVE_KEY: FormField<Values> = {
  kind: "checkbox",
  name: "remove_key",
  label: "Remove the stored key (for a local server that needs none)",
};
const MODELS: FormField<Values> = {
  kind: "textarea",
  name: "models",
  label: "Models",
  optional: true,
  hint: "The models offered in the playground, separated by commas or one per line.",
  mono: true,
  rows: 2,
  spellCheck: false,
  placeholder: "gpt-4o-mini, gpt-4o",
};

/** The key's field: what a stored key becomes, and whether the edited base URL leaves the key behind. */
function apiKeyField(editing: ModelConnection | undefined, values: Values): FormField<Values> {
  return {
    name: "api_key",
    label: editing?.has_key ? "New API key" : "API key",
    optional: true,
    hint:
      editing?.has_key && originChanged(editing.base_url, values.base_url)
        ? "The base URL moves to another host: the stored key stays with the old one. Type the key for the new address, or remove the stored key."
        : editing?.has_key
          ? "A key is stored, encrypted; it is never shown. Leave this empty to keep it, or type one to replace it."
          : "Kept encrypted on the server and never shown again, to anyone. Local servers may need none.",
    mono: true,
    type: "password",
    autoComplete: "new-password",
    spellCheck: false,
    disabled: values.remove_key,
  };
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
  const form = useForm<Values>({
    name: editing?.name ?? "",
    base_url: editing?.base_url ?? "",
    api_key: "",
    remove_key: false,
    models: editing?.models.join(", ") ?? "",
  });

  // Name and base URL are there: the dialog checked its required fields.
  const submit = () => {
    const { values } = form;
    const name = values.name.trim();
    const baseUrl = values.base_url.trim();
    const list = parseModels(values.models);
    const done = {
      onSuccess: () => {
        form.set("api_key", "");
        onClose();
      },
      onError: form.refused,
    };
    if (editing) {
      const body = changesOf(editing, {
        name,
        baseUrl,
        models: list,
        apiKey: values.api_key,
        removeKey: values.remove_key,
      });
      // Nothing changed: the server would refuse an empty edit, and there is nothing to save.
      if (Object.keys(body).length === 0) return onClose();
      update.mutate({ id: editing.id, body }, done);
      return;
    }
    add.mutate(
      {
        name,
        base_url: baseUrl,
        ...(values.api_key === "" ? {} : { api_key: values.api_key }),
        ...(list.length === 0 ? {} : { models: list }),
      },
      done,
    );
  };

  return (
    <FormDialog
      form={form}
      fields={[NAME, BASE_URL, apiKeyField(editing, form.values), editing?.has_key && REMOVE_KEY, MODELS]}
      title={editing ? `Edit ${editing.name}` : "Add a model connection"}
      name="Model connection"
      submitLabel={editing ? "Save changes" : "Add connection"}
      pending={add.isPending || update.isPending}
      onSubmit={submit}
      onClose={onClose}
    />
  );
}
