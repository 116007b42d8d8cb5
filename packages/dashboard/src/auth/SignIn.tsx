import { signInBody } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { sessionQuery, useSignIn } from "../api/queries";
import { validate } from "../forms/validate";
import { Brand } from "../shell/Brand";
import { safeNext } from "../shell/session";
import { Field, FormAlert } from "../ui/Field";
import { formatSeconds } from "../ui/format";
import { errorText } from "../ui/States";
import { useCountdown } from "./useCountdown";

const FIELDS = new Set(["email", "password"]);

export function SignIn() {
  const [params] = useSearchParams();
  const next = safeNext(params.get("next"));
  const navigate = useNavigate();
  const session = useQuery(sessionQuery);
  const signIn = useSignIn();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [retryAt, setRetryAt] = useState<number | null>(null);
  const wait = useCountdown(retryAt);

  if (session.data && !signIn.isPending) return <Navigate to={next} replace />;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = validate(signInBody, { email, password });
    if (!body.ok) {
      setErrors(body.errors);
      return;
    }
    setErrors([]);
    signIn.mutate(body.data, {
      onSuccess: () => navigate(next, { replace: true }),
      onError: (error) => {
        if (isApiError(error) && error.status === 429) {
          // With Retry-After the countdown says it all; without, the server's own words do.
          setRetryAt(error.retryAfter === null ? null : Date.now() + error.retryAfter * 1000);
          setErrors(error.retryAfter === null ? [{ field: null, message: error.detail }] : []);
          return;
        }
        setErrors([
          isApiError(error)
            ? { field: error.field, message: error.detail }
            : { field: null, message: errorText(error) },
        ]);
      },
    });
  };

  const topErrors = unplacedErrors(errors, (f) => FIELDS.has(f));
  return (
    <main className="auth-page">
      <title>Sign in — Promptstore</title>
      <div className="auth-card">
        <Brand />
        <div className="card card-body">
          <h1>Sign in</h1>
          <p className="lead">to manage your prompts.</p>
          <form className="form" onSubmit={submit} noValidate>
            <FormAlert messages={topErrors} />
            {/* The countdown ticks each second, so it is not a live region; this sentence is said once. */}
            <p className="visually-hidden" role="status">
              {retryAt !== null && wait > 0
                ? `Too many attempts. You can try again at ${new Date(retryAt).toLocaleTimeString()}.`
                : ""}
            </p>
            {wait > 0 ? (
              <p className="notice notice-warning">Too many attempts. You can try again in {formatSeconds(wait)}.</p>
            ) : null}
            <Field label="E-mail" error={errorFor(errors, "email")}>
              {(control) => (
                <input
                  {...control}
                  className="input"
                  type="email"
                  name="email"
                  autoComplete="username"
                  // biome-ignore lint/a11y/noAutofocus: the only thing to do on this page is to type here
                  autoFocus
                  value={email}
                  onChange={(e) => setEmail(e.target.value)}
                />
              )}
            </Field>
            <Field label="Password" error={errorFor(errors, "password")}>
              {(control) => (
                <input
                  {...control}
                  className="input"
                  type="password"
                  name="password"
                  autoComplete="current-password"
                  value={password}
                  onChange={(e) => setPassword(e.target.value)}
                />
              )}
            </Field>
            <button
              type="submit"
              className="button button-primary button-block"
              disabled={signIn.isPending || wait > 0}
              aria-busy={signIn.isPending || undefined}
            >
              {signIn.isPending ? "Signing in…" : "Sign in"}
            </button>
          </form>
        </div>
        <p className="small subtle auth-foot">
          First start? Sign in with the owner e-mail and the one-time password the server printed.
        </p>
      </div>
    </main>
  );
}
