import { type ChangeEvent, type ReactNode, useId } from "react";
import { errorWithin, type FieldError, isWithin } from "../api/errors";
import { Field, TextField } from "../ui/Field";
import type { Form, FormValues } from "./useForm";

/** The names of the values of type T: a text input names a string, a checkbox a boolean. */
type NameOf<V, T> = { [K in keyof V]-?: V[K] extends T ? K : never }[keyof V] & string;

/** What a field says of itself; the form finds its value and its error by `name`. */
interface Described<V, T> {
  /** Its value, and the body field its errors name: `base_url`; `models` also shows `models[2]`'s error. */
  name: NameOf<V, T>;
  label: string;
  hint?: ReactNode;
  optional?: boolean;
  /** Refused as `is required` while blank, before the form is submitted. */
  required?: boolean;
  /** Focused when the dialog opens. */
  autofocus?: boolean;
}

/** A one-line input (`TextField`), the default kind. */
export interface TextInput<V> extends Described<V, string> {
  kind?: "text";
  type?: "url" | "password";
  placeholder?: string;
  autoComplete?: string;
  spellCheck?: boolean;
  maxLength?: number;
  disabled?: boolean;
  mono?: boolean;
  /** The id of a `<datalist>` of suggestions. */
  list?: string;
  inputMode?: "decimal" | "numeric";
}

export interface TextArea<V> extends Described<V, string> {
  kind: "textarea";
  rows: number;
  placeholder?: string;
  spellCheck?: boolean;
  mono?: boolean;
}

export interface Select<V> extends Described<V, string> {
  kind: "select";
  options: readonly { value: string; label: string }[];
}

/** Checkboxes under one legend, one a value, each with a line of help after its label. */
export interface Choices<V> extends Omit<Described<V, readonly string[]>, "hint" | "optional" | "required"> {
  kind: "choices";
  options: readonly { value: string; label: string; help?: string | undefined }[];
}

/** A yes or no; its label says what it does, and no error is shown beside it. */
export interface Checkbox<V> {
  kind: "checkbox";
  name: NameOf<V, boolean>;
  label: string;
}

export type FormField<V> = TextInput<V> | TextArea<V> | Select<V> | Choices<V> | Checkbox<V>;

/** A form's fields in order; `false`, `null` and `undefined` are fields this form leaves out. */
export type FormFieldList<V> = readonly (FormField<V> | false | null | undefined)[];

const present = <V,>(fields: FormFieldList<V>): FormField<V>[] =>
  fields.filter((field): field is FormField<V> => Boolean(field));

/** Whether one of the fields shows the errors of this body field beside its input. */
export function showsErrorsOf<V>(fields: FormFieldList<V>): (errorField: string) => boolean {
  return (errorField) => present(fields).some((field) => field.kind !== "checkbox" && isWithin(errorField, field.name));
}

/** `is required` for each required field left blank, in the order of the fields. */
export function missingFields<V extends FormValues>(fields: FormFieldList<V>, values: V): FieldError[] {
  return present(fields)
    .filter((field) => field.kind !== "checkbox" && field.kind !== "choices" && field.required)
    .filter((field) => String(values[field.name]).trim() === "")
    .map((field) => ({ field: field.name, message: "is required" }));
}

/** The fields, each with its label, hint and the error its name is given, in order. */
export function FormFields<V extends FormValues>({ fields, form }: { fields: FormFieldList<V>; form: Form<V> }) {
  return present(fields).map((field) => (
    <FormFieldView key={field.name} field={field} form={form} error={errorWithin(form.errors, field.name)?.message} />
  ));
}

function FormFieldView<V extends FormValues>({
  field,
  form,
  error,
}: {
  field: FormField<V>;
  form: Form<V>;
  error: string | undefined;
}) {
  // A field's value has the type its kind names (`NameOf`); TypeScript cannot follow that through `V`.
  const value = form.values[field.name] as never;
  const change = (next: string | boolean | readonly string[]) => form.set(field.name, next as V[typeof field.name]);
  const autofocus = "autofocus" in field && field.autofocus ? { "data-autofocus": true } : {};
  switch (field.kind) {
    case "checkbox":
      return (
        <label className="checkbox">
          <input type="checkbox" checked={value} onChange={(e) => change(e.target.checked)} />
          {field.label}
        </label>
      );
    case "choices":
      return <ChoicesField field={field} chosen={value} error={error} onChange={change} />;
    case "select":
    case "textarea":
      return (
        <Field label={field.label} optional={field.optional ?? false} error={error} hint={field.hint}>
          {(control) => {
            const own = {
              ...control,
              value,
              onChange: (e: ChangeEvent<HTMLSelectElement | HTMLTextAreaElement>) => change(e.target.value),
              ...autofocus,
            };
            return field.kind === "select" ? (
              <select {...own} className="select">
                {field.options.map((option) => (
                  <option key={option.value} value={option.value}>
                    {option.label}
                  </option>
                ))}
              </select>
            ) : (
              <textarea
                {...own}
                className={field.mono ? "textarea mono" : "textarea"}
                rows={field.rows}
                spellCheck={field.spellCheck}
                placeholder={field.placeholder}
              />
            );
          }}
        </Field>
      );
    default: {
      // What is left are the input's own attributes, as the field gives them.
      const {
        kind: _kind,
        name: _name,
        label,
        hint,
        optional,
        required: _required,
        autofocus: _focus,
        ...input
      } = field;
      return (
        <TextField
          label={label}
          optional={optional ?? false}
          error={error}
          hint={hint}
          {...input}
          value={value}
          onChange={change}
          {...autofocus}
        />
      );
    }
  }
}

/** The choices share the legend as their label, and the error its place under them. */
function ChoicesField<V>({
  field,
  chosen,
  error,
  onChange,
}: {
  field: Choices<V>;
  chosen: readonly string[];
  error: string | undefined;
  onChange: (chosen: string[]) => void;
}) {
  const errorId = `${useId()}-error`;
  return (
    <fieldset
      className="choices"
      aria-invalid={error ? true : undefined}
      aria-describedby={error ? errorId : undefined}
    >
      <legend className="field-label">{field.label}</legend>
      {field.options.map(({ value, label, help }) => (
        <label key={value} className="checkbox choice">
          <input
            type="checkbox"
            checked={chosen.includes(value)}
            onChange={(e) => onChange(e.target.checked ? [...chosen, value] : chosen.filter((v) => v !== value))}
          />
          <span>
            {label}
            {help ? <span className="subtle"> · {help}</span> : null}
          </span>
        </label>
      ))}
      {error ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
