import { type MemberView, ROLES, type Role } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { useState } from "react";
import { isApiError } from "../api/client";
import { membersQuery, useChangeRole, useRemoveMember } from "../api/queries";
import { useSession } from "../shell/session";
import { ConfirmDialog } from "../ui/Dialog";
import { ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { Invitations } from "./Invitations";
import { ROLE_HELP } from "./roles";

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
      {body}
      <Invitations orgId={orgId} />

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
            {removing.email} loses access to every project of {orgName}. Their account stays; an owner can invite them
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
