import { type MemberView, ROLES, type Role } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { isApiError } from "../api/client";
import { membersQuery, useChangeRole, useRemoveMember } from "../api/queries";
import { useSession } from "../shell/session";
import { ConfirmDialog } from "../ui/Dialog";
import { Options } from "../ui/Field";
import { type Column, RemoveDialog, SettingsCard, SettingsTable, useRemoval } from "../ui/SettingsTable";
import { errorText } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { Invitations } from "./Invitations";
import { ROLE_HELP } from "./roles";

export function Members({ orgId, orgName }: { orgId: string; orgName: string }) {
  const session = useSession();
  const members = useQuery(membersQuery(orgId));
  const removing = useRemoval(useRemoveMember(orgId), (member: MemberView) => member.user_id);
  const [demoting, setDemoting] = useState<{ member: MemberView; role: Role } | null>(null);
  const isYou = (member: MemberView) => member.user_id === session.user.id;

  const columns: Column<MemberView>[] = [
    {
      header: "Member",
      cell: (member) => (
        <>
          <span className="member-email">{member.email}</span>
          {isYou(member) ? <span className="badge badge-outline member-you">you</span> : null}
        </>
      ),
    },
    {
      header: "Role",
      cell: (member) => (
        <RoleSelect
          orgId={orgId}
          member={member}
          isYou={isYou(member)}
          onDemoteSelf={(role) => setDemoting({ member, role })}
        />
      ),
    },
    { header: "Added", cell: (member) => <TimeAgo iso={member.created_at} /> },
  ];

  return (
    <SettingsCard
      id="members-heading"
      title="Members"
      intro={<>People of {orgName}: they work in every project of the organization.</>}
    >
      <SettingsTable
        query={members}
        rows={members.data?.members ?? []}
        rowKey={(member) => member.user_id}
        loading="Loading the members…"
        columns={columns}
        actions={(member) => [{ label: "Remove", onClick: () => removing.ask(member) }]}
      />
      <Invitations orgId={orgId} />

      <RemoveDialog
        removal={removing}
        title={(member) => (isYou(member) ? "Leave this organization?" : `Remove ${member.email}?`)}
      >
        {(member) => (
          <p>
            {member.email} loses access to every project of {orgName}. Their account stays; an owner can invite them
            again.
          </p>
        )}
      </RemoveDialog>
      {demoting ? (
        <DemoteSelf orgId={orgId} member={demoting.member} role={demoting.role} onClose={() => setDemoting(null)} />
      ) : null}
    </SettingsCard>
  );
}

/** A member's role, changed as soon as another is chosen; lowering one's own asks first (`onDemoteSelf`). */
function RoleSelect({
  orgId,
  member,
  isYou,
  onDemoteSelf,
}: {
  orgId: string;
  member: MemberView;
  isYou: boolean;
  onDemoteSelf: (role: Role) => void;
}) {
  const change = useChangeRole(orgId);
  const selectId = `role-${member.user_id}`;
  const errorId = `${selectId}-error`;
  return (
    <>
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
        <Options values={ROLES} />
      </select>
      {change.isError ? (
        <p className="field-error" id={errorId} role="alert">
          {isApiError(change.error) ? change.error.detail : errorText(change.error)}
        </p>
      ) : null}
    </>
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
