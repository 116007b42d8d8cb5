import { PRODUCTION } from "@promptstore/core/labels";
import { labelName, labelSettingsBody } from "@promptstore/core/schemas";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useRef, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { type LabelSetting, labelSettingsQuery, useConfigureLabel } from "../api/release-queries";
import { useRevealErrors } from "../forms/useRevealErrors";
import { validate } from "../forms/validate";
import { Dialog } from "../ui/Dialog";
import { Field, FormAlert } from "../ui/Field";
import { plural } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { byLabelOrder } from "../ui/labels";
import { EmptyState, ErrorState, Loading } from "../ui/States";

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

  let body: ReactNode;
  if (list.isPending) body = <Loading label="Loading the labels…" />;
  else if (list.isError) body = <ErrorState error={list.error} onRetry={() => list.refetch()} />;
  else if (labels.length === 0) body = <EmptyState title="No labels yet" level={3} />;
  else {
    body = (
      <div className="table-wrap">
        <table className="table table-stack label-settings-table">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Protected</th>
              <th scope="col">Falls back to</th>
              <th scope="col">In use</th>
              <th scope="col" className="cell-actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {labels.map((label) => (
              <tr key={label.name}>
                <td className="cell-primary">
                  <LabelBadge name={label.name} />
                  {label.description ? <span className="label-setting-description">{label.description}</span> : null}
                </td>
                <td data-label="Protected">
                  {label.protected ? (
                    <span>
                      <span className="badge badge-warning">protected</span>
                    </span>
                  ) : (
                    <span className="subtle small">no</span>
                  )}
                </td>
                <td data-label="Falls back to">
                  {label.fallback ? (
                    // A wrapper, so the badge keeps its height when the stacked row's label wraps (phone).
                    <span>
                      <LabelBadge name={label.fallback} />
                    </span>
                  ) : (
                    <span className="subtle small">none</span>
                  )}
                </td>
                <td data-label="In use">
                  {label.name === PRODUCTION ? (
                    <span className="subtle small">every published prompt</span>
                  ) : (
                    plural(label.in_use, "prompt")
                  )}
                </td>
                <td className="cell-actions">
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Edit ${label.name}`}
                    onClick={() => setEditing(label)}
                  >
                    Edit
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <section className="card" aria-labelledby="labels-settings-heading">
      <div className="card-header">
        <div>
          <h2 id="labels-settings-heading">Labels</h2>
          <p>The environments of {projectName}: what each is for, its protection and its fallback.</p>
        </div>
        <button type="button" className="button button-primary" onClick={() => setEditing("new")}>
          Add label
        </button>
      </div>
      {body}
      {editing ? (
        <LabelSettingsDialog
          projectId={projectId}
          label={editing === "new" ? null : editing}
          names={labels.map((l) => l.name)}
          onClose={() => setEditing(null)}
        />
      ) : null}
    </section>
  );
}

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
  const form = useRef<HTMLFormElement>(null);
  useRevealErrors(form, errors);

  const submit = (event: FormEvent) => {
    event.preventDefault();
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
        onError: (error) =>
          setErrors([
            isApiError(error) ? { field: error.field, message: error.detail } : { field: null, message: String(error) },
          ]),
      },
    );
  };

  return (
    <Dialog title={label ? `Label ${label.name}` : "Add a label"} onClose={onClose}>
      <form ref={form} className="form" onSubmit={submit} noValidate aria-label="Label settings">
        <FormAlert messages={unplacedErrors(errors, (f) => FORM_FIELDS.has(f))} />
        {label ? null : (
          <Field
            label="Name"
            error={errorFor(errors, "name")}
            hint="Lowercase letters, digits, - and _, a letter first: staging, eu-canary."
          >
            {(control) => (
              <input
                {...control}
                className="input mono"
                autoComplete="off"
                spellCheck={false}
                maxLength={32}
                value={name}
                onChange={(e) => setName(e.target.value)}
                data-autofocus
              />
            )}
          </Field>
        )}
        <Field label="Description" optional error={errorFor(errors, "description")}>
          {(control) => (
            <input
              {...control}
              className="input"
              autoComplete="off"
              maxLength={500}
              placeholder="What this environment is for"
              value={description}
              onChange={(e) => setDescription(e.target.value)}
              data-autofocus={label ? true : undefined}
            />
          )}
        </Field>
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
              {names
                .filter((n) => n !== (label?.name ?? name.trim()))
                .map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
            </select>
          )}
        </Field>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={configure.isPending}
            aria-busy={configure.isPending || undefined}
          >
            {label ? "Save" : "Add label"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
