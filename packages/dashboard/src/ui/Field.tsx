import { type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode, useId } from "react";

export interface ControlProps {
  id: string;
  "aria-invalid": boolean | undefined;
  "aria-describedby": string | undefined;
}

interface FieldProps {
  label: ReactNode;
  error?: string | undefined;
  hint?: ReactNode;
  optional?: boolean;
  className?: string;
  /** Renders the control with the ids that tie it to its label, hint and error. */
  children: (control: ControlProps) => ReactNode;
}

export function Field({ label, error, hint, optional, className, children }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [error ? errorId : null, hint ? hintId : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className={className ? `field ${className}` : "field"}>
      <label className="field-label" htmlFor={id}>
        {label}
        {optional ? <span className="field-optional"> (optional)</span> : null}
      </label>
      {children({ id, "aria-invalid": error ? true : undefined, "aria-describedby": describedBy })}
      {hint ? (
        <p className="field-hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** The errors of a form that no input shows; announced when they appear. */
export function FormAlert({ messages }: { messages: readonly string[] }) {
  if (messages.length === 0) return null;
  return (
    <div className="form-alert" role="alert">
      {messages.length === 1 ? (
        <p>{messages[0]}</p>
      ) : (
        <ul>
          {messages.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

interface TextFieldProps
  extends Omit<InputHTMLAttributes<HTMLInputElement>, "id" | "value" | "onChange" | "className"> {
  label: ReactNode;
  error?: string | undefined;
  hint?: ReactNode;
  optional?: boolean;
  /** The field's class (the input's is `input`). */
  className?: string;
  /** Monospaced, for addresses, names and keys. */
  mono?: boolean;
  value: string;
  onChange: (value: string) => void;
}

/** How an address is typed: monospaced, with the keyboard for addresses, not spell-checked. */
const URL_INPUT = { inputMode: "url", spellCheck: false } as const;

/**
 * A one-line input in its `Field`; nothing is completed from the browser's memory unless `autoComplete` says.
 * `type="url"` is typed as an address.
 */
export function TextField({
  label,
  error,
  hint,
  optional,
  className,
  mono,
  value,
  onChange,
  ...input
}: TextFieldProps) {
  const url = input.type === "url";
  return (
    <Field label={label} error={error} hint={hint} optional={optional ?? false} {...(className ? { className } : {})}>
      {(control) => (
        <input
          {...control}
          className={mono || url ? "input mono" : "input"}
          autoComplete="off"
          {...(url ? URL_INPUT : {})}
          {...input}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

/** The `<option>`s of a select whose values are their own labels. */
export function Options({ values }: { values: readonly string[] }) {
  return values.map((value) => (
    <option key={value} value={value}>
      {value}
    </option>
  ));
}

interface BusyButtonProps extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, "type" | "disabled"> {
  type: "button" | "submit";
  /** Its request is running: the button is disabled and says it is busy. */
  busy: boolean;
}

/** A primary button (unless `className` says otherwise) that cannot be pressed twice while its request runs. */
export function BusyButton({ type, busy, className = "button button-primary", ...button }: BusyButtonProps) {
  return <button type={type} className={className} disabled={busy} aria-busy={busy || undefined} {...button} />;
}
