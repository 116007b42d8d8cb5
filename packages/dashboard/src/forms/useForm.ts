import { useState } from "react";
import type { FieldError } from "../api/errors";
import { fieldErrorOf } from "../ui/States";

/** What a form's inputs hold, by field name: text, a tick, or the values of ticked choices. */
export type FormValues = Record<string, string | boolean | readonly string[]>;

/** The values a `FormDialog` shows and changes, and the errors it shows beside them. */
export interface Form<V extends FormValues> {
  values: V;
  set<K extends keyof V>(name: K, value: V[K]): void;
  errors: readonly FieldError[];
  /** Shows these errors in place of those shown (none: clears them). */
  show(errors: readonly FieldError[]): void;
  /** The server refused what was sent: its message goes beside the field it names, or above the fields. */
  refused(error: unknown): void;
}

export function useForm<V extends FormValues>(initial: V): Form<V> {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<readonly FieldError[]>([]);
  return {
    values,
    set: (name, value) => setValues((current) => ({ ...current, [name]: value })),
    errors,
    show: (shown) => setErrors([...shown]),
    refused: (error) => setErrors([fieldErrorOf(error)]),
  };
}
