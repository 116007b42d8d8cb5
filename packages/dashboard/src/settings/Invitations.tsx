import { type InvitationView, inviteBody, ROLES, type Role } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { invitationsQuery, useInvite, useRevokeInvitation } from "../api/invitation-queries";
import { validate } from "../forms/validate";
import { CopyButton } from "../ui/CopyButton";
import { ConfirmDialog } from "../ui/Dialog";
import { Field, FormAlert } from "../ui/Field";
import { SecretField } from "../ui/Secret";
import { ErrorState, errorText, Loading } from "../ui/States";
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
  const revoke = useRevokeInvitation(orgId);
  const [revoking, setRevoking] = useState<InvitationView | null>(null);

  let body: ReactNode;
  if (list.isPending) body = <Loading label="Loading the invitations…" />;
  else if (list.isError) body = <ErrorState error={list.error} onRetry={() => list.refetch()} />;
  else if (list.data.invitations.length === 0) body = <p className="subtle invitations-empty">No invitations yet.</p>;
  else {
    body = (
      <div className="table-wrap">
        <table className="table table-stack">
          <caption className="visually-hidden">Invitations</caption>
          <thead>
            <tr>
              <th scope="col">Invited</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Sent</th>
              <th scope="col" className="cell-actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.invitations.map((invitation) => (
              <tr key={invitation.id}>
                <td className="cell-primary">{invitation.email}</td>
                <td data-label="Role">{invitation.role}</td>
                <td data-label="Status">
                  <span className={STATUS_BADGE[invitation.status]}>{invitation.status}</span>
                  {invitation.status === "pending" ? (
                    <span className="small subtle"> until {new Date(invitation.expires_at).toLocaleDateString()}</span>
                  ) : null}
                </td>
                <td data-label="Sent">
                  <TimeAgo iso={invitation.created_at} />
                </td>
                <td className="cell-actions">
                  {invitation.status === "pending" ? (
                    <button
                      type="button"
                      className="button button-small"
                      aria-label={`Revoke the invitation of ${invitation.email}`}
                      onClick={() => {
                        revoke.reset();
                        setRevoking(invitation);
                      }}
                    >
                      Revoke
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

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
      {body}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke the invitation of ${revoking.email}?`}
          confirmLabel="Revoke"
          danger
          pending={revoke.isPending}
          error={revoke.isError ? errorText(revoke.error) : null}
          onClose={() => setRevoking(null)}
          onConfirm={() => revoke.mutate(revoking.id, { onSuccess: () => setRevoking(null) })}
        >
          <p>Its link stops working at once. You can invite {revoking.email} again later.</p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

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
      <form className="add-member-form" onSubmit={submit} noValidate aria-label="Invite someone">
        <FormAlert messages={unplacedErrors(errors, (f) => FIELDS.has(f))} />
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
            disabled={invite.isPending}
            aria-busy={invite.isPending || undefined}
          >
            Invite
          </button>
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
