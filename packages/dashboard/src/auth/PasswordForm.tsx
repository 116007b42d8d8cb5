import { changePasswordBody, PASSWORD_MIN_LENGTH } from "@promptstore/core/dashboard";
import { type FormEvent, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { useChangePassword } from "../api/queries";
import { validate } from "../forms/validate";
import { Field, FormAlert } from "../ui/Field";
import { errorText } from "../ui/States";

const FIELDS = new Set(["current_password", "new_password", "confirm"]);

interface PasswordFormProps {
  /** The account's e-mail, for password managers: they file the new password under it. */
  email: string;
  submitLabel: string;
  /** False right after a sign-in with a one-time password: that sign-in was the proof. */
  askCurrent?: boolean;
  onChanged?: () => void;
}

/** Change password: every other session of the user ends; this one gets a new cookie and CSRF token. */
export function PasswordForm({ email, submitLabel, askCurrent = true, onChanged }: PasswordFormProps) {
  const change = useChangePassword();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [confirm, setConfirm] = useState("");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [done, setDone] = useState(false);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    const body = validate(
      changePasswordBody,
      askCurrent ? { current_password: current, new_password: next } : { new_password: next },
    );
    const problems = body.ok ? [] : [...body.errors];
    if (confirm !== next) problems.push({ field: "confirm", message: "does not match the new password" });
    if (!body.ok || problems.length > 0) {
      setErrors(problems);
      return;
    }
    setErrors([]);
    change.mutate(body.data, {
      onSuccess: () => {
        setCurrent("");
        setNext("");
        setConfirm("");
        setDone(true);
        onChanged?.();
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
    <form className="form" onSubmit={submit} noValidate>
      <input type="email" name="username" autoComplete="username" value={email} readOnly hidden />
      <FormAlert messages={unplacedErrors(errors, (f) => FIELDS.has(f))} />
      {done ? (
        <p className="notice notice-success" role="status">
          Password changed. You were signed out everywhere else.
        </p>
      ) : null}
      {askCurrent ? (
        <Field label="Current password" error={errorFor(errors, "current_password")}>
          {(control) => (
            <input
              {...control}
              className="input"
              type="password"
              autoComplete="current-password"
              value={current}
              onChange={(e) => setCurrent(e.target.value)}
            />
          )}
        </Field>
      ) : null}
      <Field
        label="New password"
        hint={`At least ${PASSWORD_MIN_LENGTH} characters.`}
        error={errorFor(errors, "new_password")}
      >
        {(control) => (
          <input
            {...control}
            className="input"
            type="password"
            autoComplete="new-password"
            value={next}
            onChange={(e) => setNext(e.target.value)}
          />
        )}
      </Field>
      <Field label="Confirm new password" error={errorFor(errors, "confirm")}>
        {(control) => (
          <input
            {...control}
            className="input"
            type="password"
            autoComplete="new-password"
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
          />
        )}
      </Field>
      <div className="form-actions">
        <button
          type="submit"
          className="button button-primary"
          disabled={change.isPending}
          aria-busy={change.isPending || undefined}
        >
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
