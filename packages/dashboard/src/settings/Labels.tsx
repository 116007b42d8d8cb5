import { PRODUCTION } from "@promptstore/core/labels";
import { labelName, labelSettingsBody } from "@promptstore/core/schemas";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { errorFor, type FieldError } from "../api/errors";
import { type LabelSetting, labelSettingsQuery, useConfigureLabel } from "../api/release-queries";
import { validate } from "../forms/validate";
import { FormDialog } from "../ui/Dialog";
import { Field, Options, TextField } from "../ui/Field";
import { plural } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { byLabelOrder } from "../ui/labels";
import { type Column, SettingsCard, SettingsTable } from "../ui/SettingsTable";
import { EmptyState, fieldErrorOf } from "../ui/States";

/** The project's labels (owners): what each is for, whether it is protected, what it falls back to. */
export function Labels({ projectId, projectName }: { projectId: string; projectName: string }) {
  const list = useQuery(labelSettingsQuery(projectId));
  const [editing, setEditing] = useState<LabelSetting | "new" | null>(null);
  // Production is a label every prompt may have: listed even before anyone configured it.
  const labels = list.data
    ? [
        ...list.data.labels,
        ...(list.data.labels.some((l) => l.name === PRODUCTION)
          ? []
          : [{ name: PRODUCTION, description: "", protected: false, fallback: null, updated_at: "", in_use: 0 }]),
      ].sort((a, b) => byLabelOrder(a.name, b.name))
    : [];

  return (
    <SettingsCard
      id="labels-settings-heading"
      title="Labels"
      intro={<>The environments of {projectName}: what each is for, its protection and its fallback.</>}
      action={
        <button type="button" className="button button-primary" onClick={() => setEditing("new")}>
          Add label
        </button>
      }
    >
      <SettingsTable
        query={list}
        rows={labels}
        rowKey={(label) => label.name}
        loading="Loading the labels…"
        empty={<EmptyState title="No labels yet" level={3} />}
        className="label-settings-table"
        columns={COLUMNS}
        actions={(label) => [{ label: "Edit", name: `Edit ${label.name}`, onClick: () => setEditing(label) }]}
      />
      {editing ? (
        <LabelSettingsDialog
          projectId={projectId}
          label={editing === "new" ? null : editing}
          names={labels.map((l) => l.name)}
          onClose={() => setEditing(null)}
        />
      ) : null}
    </SettingsCard>
  );
}

const COLUMNS: Column<LabelSetting>[] = [
  {
    header: "Label",
    cell: (label) => (
      <>
        <LabelBadge name={label.name} />
        {label.description ? <span className="label-setting-description">{label.description}</span> : null}
      </>
    ),
  },
  {
    header: "Protected",
    cell: (label) =>
      label.protected ? (
        <span>
          <span className="badge badge-warning">protected</span>
        </span>
      ) : (
        <span className="subtle small">no</span>
      ),
  },
  {
    header: "Falls back to",
    cell: (label) =>
      label.fallback ? (
        // A wrapper, so the badge keeps its height when the stacked row's label wraps (phone).
        <span>
          <LabelBadge name={label.fallback} />
        </span>
      ) : (
        <span className="subtle small">none</span>
      ),
  },
  {
    header: "In use",
    cell: (label) =>
      label.name === PRODUCTION ? (
        <span className="subtle small">every published prompt</span>
      ) : (
        plural(label.in_use, "prompt")
      ),
  },
];

const FORM_FIELDS = new Set(["name", "description", "fallback"]);

function LabelSettingsDialog({
  projectId,
  label,
  names,
  onClose,
}: {
  projectId: string;
  label: LabelSetting | null;
  names: readonly string[];
  onClose: () => void;
}) {
  const configure = useConfigureLabel(projectId);
  const [name, setName] = useState(label?.name ?? "");
  const [description, setDescription] = useState(label?.description ?? "");
  const [isProtected, setProtected] = useState(label?.protected ?? false);
  const [fallback, setFallback] = useState(label?.fallback ?? "");
  const [errors, setErrors] = useState<FieldError[]>([]);

  const submit = () => {
    const checkedName = validate(labelName, name.trim(), "name");
    const body = validate(labelSettingsBody, {
      description: description.trim(),
      protected: isProtected,
      fallback: fallback === "" ? null : fallback,
    });
    const found = [...(checkedName.ok ? [] : checkedName.errors), ...(body.ok ? [] : body.errors)];
    if (!checkedName.ok || !body.ok) return setErrors(found);
    setErrors([]);
    configure.mutate(
      { name: checkedName.data, body: body.data },
      {
        onSuccess: onClose,
        onError: (error) => setErrors([fieldErrorOf(error)]),
      },
    );
  };

  return (
    <FormDialog
      title={label ? `Label ${label.name}` : "Add a label"}
      name="Label settings"
      errors={errors}
      shows={(f) => FORM_FIELDS.has(f)}
      submitLabel={label ? "Save" : "Add label"}
      pending={configure.isPending}
      onSubmit={submit}
      onClose={onClose}
    >
      {label ? null : (
        <TextField
          label="Name"
          error={errorFor(errors, "name")}
          hint="Lowercase letters, digits, - and _, a letter first: staging, eu-canary."
          mono
          spellCheck={false}
          maxLength={32}
          value={name}
          onChange={setName}
          data-autofocus
        />
      )}
      <TextField
        label="Description"
        optional
        error={errorFor(errors, "description")}
        maxLength={500}
        placeholder="What this environment is for"
        value={description}
        onChange={setDescription}
        data-autofocus={label ? true : undefined}
      />
      <label className="checkbox">
        <input type="checkbox" checked={isProtected} onChange={(e) => setProtected(e.target.checked)} />
        Protected: moving it needs a release request approved by another owner
      </label>
      <Field
        label="Falls back to"
        optional
        error={errorFor(errors, "fallback")}
        hint="Served to reads of a prompt that lacks this label. A protected label falls back only to a protected one."
      >
        {(control) => (
          <select {...control} className="select" value={fallback} onChange={(e) => setFallback(e.target.value)}>
            <option value="">None: such a read is a 404</option>
            <Options values={names.filter((n) => n !== (label?.name ?? name.trim()))} />
          </select>
        )}
      </Field>
    </FormDialog>
  );
}
