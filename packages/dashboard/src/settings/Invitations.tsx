import { type InvitationView, inviteBody, ROLES, type Role } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { invitationsQuery, useInvite, useRevokeInvitation } from "../api/invitation-queries";
import { validate } from "../forms/validate";
import { CopyButton } from "../ui/CopyButton";
import { BusyButton, Field, FormAlert, Options, TextField } from "../ui/Field";
import { SecretField } from "../ui/Secret";
import { type Column, RemoveDialog, SettingsTable, useRemoval } from "../ui/SettingsTable";
import { fieldErrorOf } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { ROLE_HELP } from "./roles";

const FIELDS = new Set(["email", "role"]);
const STATUS_BADGE: Record<InvitationView["status"], string> = {
  pending: "badge badge-latest",
  accepted: "badge badge-production",
  revoked: "badge",
  expired: "badge",
};

/** Owners invite people, see their invitations' fate, and revoke pending ones. Nobody joins without accepting. */
export function Invitations({ orgId }: { orgId: string }) {
  const list = useQuery(invitationsQuery(orgId));
  const revoking = useRemoval(useRevokeInvitation(orgId), (invitation: InvitationView) => invitation.id);

  return (
    <div className="invitations">
      <div className="invitations-intro">
        <h3 id="invitations-heading">Invitations</h3>
        <p className="small subtle">
          An invitation is a link you send; the person joins when they accept it, signed in with that e-mail address.
          The link creates no account: someone new gets theirs from the server's operator.
        </p>
      </div>
      <InviteForm orgId={orgId} />
      <SettingsTable
        query={list}
        rows={list.data?.invitations ?? []}
        rowKey={(invitation) => invitation.id}
        loading="Loading the invitations…"
        empty={<p className="subtle invitations-empty">No invitations yet.</p>}
        caption="Invitations"
        columns={COLUMNS}
        actions={(invitation) =>
          invitation.status === "pending"
            ? [
                {
                  label: "Revoke",
                  name: `Revoke the invitation of ${invitation.email}`,
                  onClick: () => revoking.ask(invitation),
                },
              ]
            : []
        }
      />
      <RemoveDialog
        removal={revoking}
        title={(invitation) => `Revoke the invitation of ${invitation.email}?`}
        confirmLabel="Revoke"
      >
        {(invitation) => <p>Its link stops working at once. You can invite {invitation.email} again later.</p>}
      </RemoveDialog>
    </div>
  );
}

const COLUMNS: Column<InvitationView>[] = [
  { header: "Invited", cell: (invitation) => invitation.email },
  { header: "Role", cell: (invitation) => invitation.role },
  {
    header: "Status",
    cell: (invitation) => (
      <>
        <span className={STATUS_BADGE[invitation.status]}>{invitation.status}</span>
        {invitation.status === "pending" ? (
          <span className="small subtle"> until {new Date(invitation.expires_at).toLocaleDateString()}</span>
        ) : null}
      </>
    ),
  },
  { header: "Sent", cell: (invitation) => <TimeAgo iso={invitation.created_at} /> },
];

function InviteForm({ orgId }: { orgId: string }) {
  const invite = useInvite(orgId);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("editor");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [sent, setSent] = useState<{ email: string; role: Role; link: string } | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = validate(inviteBody, { email, role });
    if (!body.ok) {
      setErrors(body.errors);
      return;
    }
    setErrors([]);
    setSent(null);
    invite.mutate(body.data, {
      onSuccess: (created) => {
        setSent({ email: created.email, role: created.role, link: `${window.location.origin}${created.link}` });
        setEmail("");
      },
      onError: (error) => setErrors([fieldErrorOf(error)]),
    });
  };

  return (
    <div className="add-member">
      <form className="add-member-form" onSubmit={submit} noValidate aria-label="Invite someone">
        <FormAlert messages={unplacedErrors(errors, (f) => FIELDS.has(f))} />
        <div className="add-member-fields">
          <TextField
            label="E-mail"
            error={errorFor(errors, "email")}
            className="add-member-email"
            type="email"
            value={email}
            onChange={setEmail}
          />
          <Field label="Role" error={errorFor(errors, "role")} hint={ROLE_HELP[role]}>
            {(control) => (
              <select {...control} className="select" value={role} onChange={(e) => setRole(e.target.value as Role)}>
                <Options values={ROLES} />
              </select>
            )}
          </Field>
          <BusyButton type="submit" className="button button-primary add-member-submit" busy={invite.isPending}>
            Invite
          </BusyButton>
        </div>
      </form>
      {sent ? (
        <div className="notice notice-success added-member" role="status">
          <div className="stack">
            <p>
              Invitation for <strong>{sent.email}</strong> as {sent.role}. Send them this link; it is shown only once.
            </p>
            <SecretField value={sent.link} label={`Invitation link for ${sent.email}`}>
              <CopyButton text={sent.link} />
            </SecretField>
          </div>
        </div>
      ) : null}
    </div>
  );
}
