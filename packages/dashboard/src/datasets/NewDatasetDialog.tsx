import type { CreatedDataset } from "@promptstore/core/evaluations/dataset-views";
import { useEffect, useId, useState } from "react";
import { isApiError } from "../api/client";
import { type FileFormat, useCreateDataset } from "../api/dataset-queries";
import { type FormField, type FormFieldList, FormFields } from "../forms/FormFields";
import { useForm } from "../forms/useForm";
import { PromptSuggestions } from "../prompts/PromptPicker";
import { FormDialog } from "../ui/Dialog";
import { Field } from "../ui/Field";
import { plural, shortHash } from "../ui/format";
import { formatOf, type Preview, previewFile, previewText } from "./file-preview";
import { formatField } from "./format-field";
import { PreviewTable } from "./PreviewTable";

type Source = "file" | "paste" | "examples" | "empty";

type Values = {
  name: string;
  description: string;
  source: Source;
  text: string;
  format: "auto" | FileFormat;
  prompt: string;
};

const NAME: FormField<Values> = { name: "name", label: "Name", required: true, autofocus: true, maxLength: 200 };
const DESCRIPTION: FormField<Values> = {
  kind: "textarea",
  name: "description",
  label: "Description",
  optional: true,
  rows: 2,
};
const SOURCE: FormField<Values> = {
  kind: "select",
  name: "source",
  label: "Cases",
  options: [
    { value: "file", label: "Import a JSONL or CSV file" },
    { value: "paste", label: "Paste JSONL or CSV" },
    { value: "examples", label: "A prompt's saved examples" },
    { value: "empty", label: "None yet (add them on the dataset's page)" },
  ],
};
const FORMAT = formatField<Values>();
const TEXT: FormField<Values> = {
  kind: "textarea",
  name: "text",
  label: "JSONL or CSV",
  rows: 8,
  mono: true,
  spellCheck: false,
  required: true,
  placeholder: '{"vars": {"customer": "Ada"}, "expected": "Hello Ada"}',
};

/**
 * A new dataset: its name and description, and its first cases from a file (streamed to the server as it is
 * read), from pasted text, from a prompt's saved examples, or none. Files and text are previewed before they
 * are sent: the first cases as the server will read them, and the first problem by its line.
 */
export function NewDatasetDialog({
  projectId,
  onClose,
  onCreated,
}: {
  projectId: string;
  onClose: () => void;
  onCreated: (created: CreatedDataset, notice: string) => void;
}) {
  const create = useCreateDataset(projectId);
  const form = useForm<Values>({ name: "", description: "", source: "file", text: "", format: "auto", prompt: "" });
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [fileError, setFileError] = useState<string | undefined>();
  const promptsId = useId();
  const { source, text, format } = form.values;

  // The preview follows what would be sent: the file's start, or the pasted text.
  useEffect(() => {
    let current = true;
    if (source === "file" && file) {
      void previewFile(file, format).then((shown) => {
        if (current) setPreview(shown);
      });
    } else if (source === "paste" && text.trim() !== "") {
      setPreview(previewText(text, formatOf(format, "", text)));
    } else setPreview(null);
    return () => {
      current = false;
    };
  }, [source, file, text, format]);

  const PROMPT: FormField<Values> = {
    name: "prompt",
    label: "Prompt",
    required: true,
    mono: true,
    list: promptsId,
    hint: "Its id. Each saved example becomes a case: its variables, its chat, its good answer as expected.",
  };
  const fields: FormFieldList<Values> = [
    NAME,
    DESCRIPTION,
    SOURCE,
    source === "paste" && TEXT,
    source === "paste" && FORMAT,
    source === "examples" && PROMPT,
  ];

  const submit = () => {
    if (source === "file" && !file) {
      setFileError("choose a file");
      return;
    }
    if ((source === "file" || source === "paste") && preview?.problem) {
      form.show([{ field: source === "paste" ? "text" : null, message: preview.problem }]);
      return;
    }
    const name = form.values.name.trim();
    const description = form.values.description.trim();
    const base = { name, ...(description ? { description } : {}) };
    const sourceBody =
      source === "file" && file
        ? { kind: "file" as const, file, format: formatOf(format, file.name, "") }
        : source === "paste"
          ? { kind: "file" as const, file: text, format: preview?.format ?? formatOf(format, "", text) }
          : source === "examples"
            ? { kind: "examples" as const, promptId: form.values.prompt.trim() }
            : { kind: "cases" as const, cases: [] };
    // A file's format by its name; content sniffing needs its start, which the preview read.
    if (sourceBody.kind === "file" && source === "file" && preview) sourceBody.format = preview.format;
    create.mutate(
      { ...base, source: sourceBody },
      {
        onSuccess: (created) => {
          const from = created.examples !== undefined ? ` from ${plural(created.examples, "saved example")}` : "";
          onCreated(
            created,
            `Created “${created.name}” with ${plural(created.cases, "case")}${from} (version ${shortHash(created.version)}).`,
          );
        },
        onError: (error) => {
          // The server names the body's field (`from_examples`, the prompt field here), a query field of an
          // import (`name`), or the file's line (`line 3: …`, shown above the fields).
          if (isApiError(error) && error.field === "from_examples") {
            form.show([{ field: "prompt", message: error.detail }]);
          } else form.refused(error);
        },
      },
    );
  };

  return (
    <FormDialog
      form={form}
      fields={fields}
      title="New dataset"
      name="New dataset"
      className="dataset-form"
      submitLabel={source === "file" ? "Import" : "Create dataset"}
      pending={create.isPending}
      onSubmit={submit}
      onClose={onClose}
    >
      {source === "examples" ? (
        <PromptSuggestions id={promptsId} projectId={projectId} typed={form.values.prompt} />
      ) : null}
      {source === "file" ? (
        <Field
          label="File"
          error={fileError}
          hint="JSONL (one case per line) or CSV (a header row; each column a variable, except expected, tags and messages). Sent as it is read, whatever its size."
        >
          {(control) => (
            <input
              {...control}
              type="file"
              className="input file-input"
              accept=".jsonl,.ndjson,.json,.csv,application/x-ndjson,text/csv"
              onChange={(e) => {
                setFileError(undefined);
                setFile(e.target.files?.[0] ?? null);
              }}
            />
          )}
        </Field>
      ) : null}
      {source === "file" ? <FormFields fields={[FORMAT]} form={form} /> : null}
      {preview ? <PreviewTable preview={preview} /> : null}
    </FormDialog>
  );
}
