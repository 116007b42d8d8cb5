import { createProjectBody, type Membership } from "@promptstore/core/dashboard";
import { type FormEvent, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { useCreateProject } from "../api/queries";
import { validate } from "../forms/validate";
import { Dialog } from "../ui/Dialog";
import { Field, FormAlert } from "../ui/Field";
import { errorText } from "../ui/States";

interface NewProjectDialogProps {
  /** The organizations where the user is an owner. */
  orgs: Membership["org"][];
  onClose: () => void;
  onCreated: (projectId: string) => void;
}

export function NewProjectDialog({ orgs, onClose, onCreated }: NewProjectDialogProps) {
  const create = useCreateProject();
  const [orgId, setOrgId] = useState(orgs[0]?.id ?? "");
  const [name, setName] = useState("");
  const [errors, setErrors] = useState<FieldError[]>([]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = validate(createProjectBody, { name });
    if (!body.ok) {
      setErrors(body.errors);
      return;
    }
    create.mutate(
      { orgId, name: body.data.name },
      {
        onSuccess: (project) => onCreated(project.id),
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
    <Dialog title="New project" onClose={onClose}>
      <p>A project holds prompts and the API keys that read them.</p>
      <form className="form" onSubmit={submit} noValidate>
        <FormAlert messages={unplacedErrors(errors, (f) => f === "name")} />
        {orgs.length > 1 ? (
          <Field label="Organization">
            {(control) => (
              <select {...control} className="select" value={orgId} onChange={(e) => setOrgId(e.target.value)}>
                {orgs.map((org) => (
                  <option key={org.id} value={org.id}>
                    {org.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        <Field label="Name" error={errorFor(errors, "name")}>
          {(control) => (
            <input
              {...control}
              className="input"
              value={name}
              onChange={(e) => setName(e.target.value)}
              data-autofocus
              autoComplete="off"
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
            disabled={create.isPending}
            aria-busy={create.isPending || undefined}
          >
            Create project
          </button>
        </div>
      </form>
    </Dialog>
  );
}
