import { useEffect, useState } from "react";
import { type DatasetView, type FileFormat, useImportInto } from "../api/dataset-queries";
import { type FormField, FormFields } from "../forms/FormFields";
import { useForm } from "../forms/useForm";
import { FormDialog } from "../ui/Dialog";
import { Field } from "../ui/Field";
import { plural } from "../ui/format";
import { type Preview, previewFile } from "./file-preview";
import { formatField } from "./format-field";
import { PreviewTable } from "./PreviewTable";

type Values = { mode: "append" | "replace"; format: "auto" | FileFormat; message: string };

const MODE: FormField<Values> = {
  kind: "select",
  name: "mode",
  label: "The file's cases",
  options: [
    { value: "append", label: "Go after the cases there are" },
    { value: "replace", label: "Replace every case" },
  ],
};
const FORMAT = formatField<Values>();
const MESSAGE: FormField<Values> = { name: "message", label: "Change note", optional: true, maxLength: 500 };

/** A JSONL or CSV file streamed into a new version: after the cases, or in their place. */
export function ImportDialog({
  projectId,
  dataset,
  onClose,
  onSaved,
}: {
  projectId: string;
  dataset: DatasetView;
  onClose: () => void;
  onSaved: (saved: { version: string; created: boolean; cases: number }) => void;
}) {
  const importing = useImportInto(projectId, dataset.id);
  const form = useForm<Values>({ mode: "append", format: "auto", message: "" });
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [fileError, setFileError] = useState<string | undefined>();
  const { format } = form.values;

  useEffect(() => {
    let current = true;
    if (!file) {
      setPreview(null);
      return;
    }
    void previewFile(file, format).then((shown) => {
      if (current) setPreview(shown);
    });
    return () => {
      current = false;
    };
  }, [file, format]);

  return (
    <FormDialog
      form={form}
      fields={[MODE]}
      title={`Import into ${dataset.name}`}
      name="Import cases"
      className="dataset-form"
      submitLabel="Import"
      pending={importing.isPending}
      onClose={onClose}
      onSubmit={() => {
        if (!file || !preview) return setFileError("choose a file");
        if (preview.problem) return form.show([{ field: null, message: preview.problem }]);
        const message = form.values.message.trim();
        importing.mutate(
          {
            file,
            format: preview.format,
            mode: form.values.mode,
            base: dataset.version,
            ...(message ? { message } : {}),
          },
          { onSuccess: onSaved, onError: form.refused },
        );
      }}
    >
      <Field label="File" error={fileError} hint={`The dataset holds ${plural(dataset.cases, "case")} now.`}>
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
      <FormFields fields={[FORMAT, MESSAGE]} form={form} />
      {preview ? <PreviewTable preview={preview} /> : null}
    </FormDialog>
  );
}
