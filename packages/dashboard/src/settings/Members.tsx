import { addMemberBody, type MemberView, ROLES, type Role } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { type FormEvent, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { membersQuery, useAddMember, useChangeRole, useRemoveMember } from "../api/queries";
import { validate } from "../forms/validate";
import { useSession } from "../shell/session";
import { CopyButton } from "../ui/CopyButton";
import { ConfirmDialog } from "../ui/Dialog";
import { Field, FormAlert } from "../ui/Field";
import { SecretField } from "../ui/Secret";
import { ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";

const ROLE_HELP: Record<Role, string> = {
  owner: "everything, including keys, members and projects",
  editor: "create, edit and publish prompts",
  viewer: "read prompts",
};

export function Members({ orgId, orgName }: { orgId: string; orgName: string }) {
  const session = useSession();
  const members = useQuery(membersQuery(orgId));
  const remove = useRemoveMember(orgId);
  const [removing, setRemoving] = useState<MemberView | null>(null);
  const [demoting, setDemoting] = useState<{ member: MemberView; role: Role } | null>(null);

  let body: ReactNode;
  if (members.isPending) body = <Loading label="Loading the members…" />;
  else if (members.isError) body = <ErrorState error={members.error} onRetry={() => members.refetch()} />;
  else {
    body = (
      <div className="table-wrap">
        <table className="table table-stack">
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Role</th>
              <th scope="col">Added</th>
              <th scope="col" className="cell-actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.data.members.map((member) => (
              <MemberRow
                key={member.user_id}
                orgId={orgId}
                member={member}
                isYou={member.user_id === session.user.id}
                onDemoteSelf={(role) => setDemoting({ member, role })}
                onRemove={() => {
                  remove.reset();
                  setRemoving(member);
                }}
              />
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <section className="card" aria-labelledby="members-heading">
      <div className="card-header">
        <div>
          <h2 id="members-heading">Members</h2>
          <p>People of {orgName}: they work in every project of the organization.</p>
        </div>
      </div>
      <AddMember orgId={orgId} />
      {body}

      {removing ? (
        <ConfirmDialog
          title={removing.user_id === session.user.id ? "Leave this organization?" : `Remove ${removing.email}?`}
          confirmLabel="Remove"
          danger
          pending={remove.isPending}
          error={remove.isError ? errorText(remove.error) : null}
          onClose={() => setRemoving(null)}
          onConfirm={() => remove.mutate(removing.user_id, { onSuccess: () => setRemoving(null) })}
        >
          <p>
            {removing.email} loses access to every project of {orgName}. Their account stays; an owner can add them
            again.
          </p>
        </ConfirmDialog>
      ) : null}
      {demoting ? (
        <DemoteSelf orgId={orgId} member={demoting.member} role={demoting.role} onClose={() => setDemoting(null)} />
      ) : null}
    </section>
  );
}

function MemberRow({
  orgId,
  member,
  isYou,
  onDemoteSelf,
  onRemove,
}: {
  orgId: string;
  member: MemberView;
  isYou: boolean;
  onDemoteSelf: (role: Role) => void;
  onRemove: () => void;
}) {
  const change = useChangeRole(orgId);
  const selectId = `role-${member.user_id}`;
  const errorId = `${selectId}-error`;
  return (
    <tr>
      <td className="cell-primary">
        <span className="member-email">{member.email}</span>
        {isYou ? <span className="badge badge-outline member-you">you</span> : null}
      </td>
      <td data-label="Role">
        <label htmlFor={selectId} className="visually-hidden">
          Role of {member.email}
        </label>
        <select
          id={selectId}
          className="select role-select"
          value={member.role}
          disabled={change.isPending}
          aria-invalid={change.isError || undefined}
          aria-describedby={change.isError ? errorId : undefined}
          onChange={(e) => {
            const role = e.target.value as Role;
            if (isYou && role !== "owner") onDemoteSelf(role);
            else change.mutate({ userId: member.user_id, role });
          }}
        >
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
        {change.isError ? (
          <p className="field-error" id={errorId} role="alert">
            {isApiError(change.error) ? change.error.detail : errorText(change.error)}
          </p>
        ) : null}
      </td>
      <td data-label="Added">
        <TimeAgo iso={member.created_at} />
      </td>
      <td className="cell-actions">
        <button type="button" className="button button-small" onClick={onRemove}>
          Remove
        </button>
      </td>
    </tr>
  );
}

function DemoteSelf({
  orgId,
  member,
  role,
  onClose,
}: {
  orgId: string;
  member: MemberView;
  role: Role;
  onClose: () => void;
}) {
  const change = useChangeRole(orgId);
  return (
    <ConfirmDialog
      title="Change your own role?"
      confirmLabel={`Become ${role}`}
      danger
      pending={change.isPending}
      error={change.isError ? errorText(change.error) : null}
      onClose={onClose}
      onConfirm={() => change.mutate({ userId: member.user_id, role }, { onSuccess: onClose })}
    >
      <p>
        As {role} you can {ROLE_HELP[role]}. You will no longer manage keys and members, and only another owner can give
        the role back.
      </p>
    </ConfirmDialog>
  );
}

const ADD_FIELDS = new Set(["email", "role"]);

function AddMember({ orgId }: { orgId: string }) {
  const add = useAddMember(orgId);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("editor");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [added, setAdded] = useState<{ email: string; role: Role; password?: string } | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = validate(addMemberBody, { email, role });
    if (!body.ok) {
      setErrors(body.errors);
      return;
    }
    setErrors([]);
    setAdded(null);
    add.mutate(body.data, {
      onSuccess: (member) => {
        setAdded({
          email: member.email,
          role: member.role,
          ...(member.password === undefined ? {} : { password: member.password }),
        });
        setEmail("");
      },
      onError: (error) =>
        setErrors([
          isApiError(error)
            ? { field: error.field, message: error.detail }
            : { field: null, message: errorText(error) },
        ]),
    });
  };

  return (
    <div className="add-member">
      <form className="add-member-form" onSubmit={submit} noValidate aria-label="Add a member">
        <FormAlert messages={unplacedErrors(errors, (f) => ADD_FIELDS.has(f))} />
        <div className="add-member-fields">
          <Field label="E-mail" error={errorFor(errors, "email")} className="add-member-email">
            {(control) => (
              <input
                {...control}
                className="input"
                type="email"
                autoComplete="off"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
              />
            )}
          </Field>
          <Field label="Role" error={errorFor(errors, "role")} hint={ROLE_HELP[role]}>
            {(control) => (
              <select {...control} className="select" value={role} onChange={(e) => setRole(e.target.value as Role)}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button
            type="submit"
            className="button button-primary add-member-submit"
            disabled={add.isPending}
            aria-busy={add.isPending || undefined}
          >
            Add member
          </button>
        </div>
      </form>
      {added ? (
        <div className="notice notice-success added-member" role="status">
          {added.password ? (
            <div className="stack">
              <p>
                Account created for <strong>{added.email}</strong> as {added.role}. Give them this one-time password
                securely; it is shown only once. They choose their own at their first sign-in.
              </p>
              <SecretField value={added.password} label={`One-time password of ${added.email}`}>
                <CopyButton text={added.password} />
              </SecretField>
            </div>
          ) : (
            <p>
              <strong>{added.email}</strong> already had an account and was added as {added.role}.
            </p>
          )}
        </div>
      ) : null}
    </div>
  );
}
