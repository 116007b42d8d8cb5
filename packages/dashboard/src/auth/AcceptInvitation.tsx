import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Link, useLocation, useNavigate } from "react-router";
import { invitationPreviewQuery, useAcceptInvitation } from "../api/invitation-queries";
import { sessionQuery } from "../api/queries";
import { Brand } from "../shell/Brand";
import { FormAlert } from "../ui/Field";
import { ErrorState, errorText, Loading } from "../ui/States";
import { PasswordForm } from "./PasswordForm";
import { SignOutButton } from "./SignOutButton";

/**
 * The page an invitation link opens (`/invite#<token>`: the token stays in the fragment, out of every request
 * line and log). Signed in as the invited e-mail: one button joins (after choosing a password, when signed in
 * with a one-time one). Signed out: sign in as that e-mail and come back; the link creates no account.
 */
export default function AcceptInvitation() {
  const { hash } = useLocation();
  const token = hash.replace(/^#/, "");
  const session = useQuery(sessionQuery);
  const preview = useQuery({ ...invitationPreviewQuery(token), enabled: token !== "" });

  let content: ReactNode;
  if (token === "") {
    content = <p className="notice notice-danger">This link holds no invitation. Open the whole link you were sent.</p>;
  } else if (preview.isPending || session.isPending) {
    content = <Loading label="Reading the invitation…" />;
  } else if (preview.isError) {
    content = <ErrorState title="This invitation cannot be used" error={preview.error} />;
  } else {
    const offer = preview.data;
    const user = session.data?.user;
    content = (
      <>
        <h1>
          Join {offer.org.name} as {offer.role}
        </h1>
        <p className="lead">
          This invitation is for <strong>{offer.email}</strong>, until {new Date(offer.expires_at).toLocaleString()}.
        </p>
        {user && user.email === offer.email && user.must_change_password ? (
          <ChooseThenJoin email={user.email} />
        ) : user && user.email === offer.email ? (
          <JoinButton token={token} org={offer.org.name} role={offer.role} />
        ) : user ? (
          <div className="stack">
            <p className="notice notice-warning">
              You are signed in as {user.email}. Only {offer.email} can accept this invitation: sign out, then open the
              link again and sign in as {offer.email}.
            </p>
            <SignOutButton className="button" />
          </div>
        ) : (
          <SignedOutChoices token={token} email={offer.email} />
        )}
      </>
    );
  }

  return (
    <main className="auth-page">
      <title>Invitation — Promptstore</title>
      <div className="auth-card">
        <Brand />
        <div className="card card-body">{content}</div>
      </div>
    </main>
  );
}

function JoinButton({ token, org, role }: { token: string; org: string; role: string }) {
  const accept = useAcceptInvitation();
  const navigate = useNavigate();
  return (
    <div className="stack">
      {accept.isError ? <FormAlert messages={[errorText(accept.error)]} /> : null}
      <button
        type="button"
        className="button button-primary button-block"
        disabled={accept.isPending}
        aria-busy={accept.isPending || undefined}
        onClick={() => accept.mutate(token, { onSuccess: () => navigate("/", { replace: true }) })}
      >
        {accept.isPending ? "Joining…" : `Join ${org} as ${role}`}
      </button>
    </div>
  );
}

/**
 * Signed out: sign in as the invited address. The link creates no account (decisions.md, "Invitations and
 * other organizations' accounts"): an address without one gets it from the server's operator, with a
 * one-time password, and comes back here through the same sign-in.
 */
function SignedOutChoices({ token, email }: { token: string; email: string }) {
  const next = new URLSearchParams({ next: `/invite#${token}` }).toString();
  return (
    <div className="stack">
      <Link className="button button-primary button-block" to={`/sign-in?${next}`}>
        Sign in as {email} to accept
      </Link>
      <section className="stack" aria-labelledby="no-account-heading">
        <h2 id="no-account-heading">No account yet?</h2>
        <p>
          Accounts on this server are made by its operator, not by invitation links. Ask them to create one for{" "}
          <strong>{email}</strong>. They will give you a one-time password: open this link again, sign in with it,
          choose your own password, and join.
        </p>
      </section>
    </div>
  );
}

/** Signed in as the invited address with a one-time password: choose one's own first, then join here. */
function ChooseThenJoin({ email }: { email: string }) {
  return (
    <section className="stack" aria-labelledby="choose-heading">
      <h2 id="choose-heading">First, choose your password</h2>
      <p>You signed in with a one-time password. Choose your own, then join.</p>
      <PasswordForm email={email} submitLabel="Save password" askCurrent={false} />
    </section>
  );
}
