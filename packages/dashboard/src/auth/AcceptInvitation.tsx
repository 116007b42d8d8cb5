import { invitationAccountBody } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useState } from "react";
import { Link, useLocation, useNavigate } from "react-router";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { invitationPreviewQuery, useAcceptInvitation, useCreateInvitedAccount } from "../api/invitation-queries";
import { sessionQuery } from "../api/queries";
import { validate } from "../forms/validate";
import { Brand } from "../shell/Brand";
import { Field, FormAlert } from "../ui/Field";
import { ErrorState, errorText, Loading } from "../ui/States";
import { SignOutButton } from "./SignOutButton";

const accountForm = invitationAccountBody.pick({ password: true });

/**
 * The page an invitation link opens (`/invite#<token>`: the token stays in the fragment, out of every request
 * line and log). Signed in as the invited e-mail: one button joins. Signed out: sign in and come back, or
 * create the account with a password of one's own.
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
        {user && user.email === offer.email ? (
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

function SignedOutChoices({ token, email }: { token: string; email: string }) {
  const create = useCreateInvitedAccount();
  const navigate = useNavigate();
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const next = new URLSearchParams({ next: `/invite#${token}` }).toString();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = validate(accountForm, { password });
    if (!body.ok) {
      setErrors(body.errors);
      return;
    }
    setErrors([]);
    create.mutate(
      { token, password: body.data.password },
      {
        onSuccess: () => navigate("/", { replace: true }),
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
    <div className="stack">
      <p>
        Already have an account for {email}?{" "}
        <Link className="inline-link" to={`/sign-in?${next}`}>
          Sign in to accept
        </Link>
        .
      </p>
      <form className="form" onSubmit={submit} noValidate aria-labelledby="create-account-heading">
        <h2 id="create-account-heading">New here? Create your account</h2>
        <FormAlert messages={unplacedErrors(errors, (f) => f === "password")} />
        <input type="email" name="email" autoComplete="username" value={email} readOnly hidden />
        <Field label="Choose a password" hint="At least 12 characters." error={errorFor(errors, "password")}>
          {(control) => (
            <input
              {...control}
              className="input"
              type="password"
              name="new-password"
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <button
          type="submit"
          className="button button-primary button-block"
          disabled={create.isPending}
          aria-busy={create.isPending || undefined}
        >
          {create.isPending ? "Creating your account…" : "Create account and join"}
        </button>
      </form>
    </div>
  );
}
