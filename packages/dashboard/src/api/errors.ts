/**
 * The API names the field of an error first (`sections[2].title: must not be blank`); forms use that
 * to put the message next to the input it is about. Pure, so it is unit-tested.
 */
export interface FieldError {
  /** `sections[2].title`, `email`; null when the message names no field. */
  field: string | null;
  message: string;
}

// An identifier, then any number of `[n]` or `.name` parts: only that reads as a field, so a sentence
// with a colon in it ("Too many attempts: wait") is not mistaken for one.
const FIELD_PREFIX = /^([A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\]|\.[A-Za-z_][A-Za-z0-9_-]*)*): ([\s\S]+)$/;

export function parseFieldError(text: string): FieldError {
  const match = FIELD_PREFIX.exec(text.trim());
  if (!match) return { field: null, message: text.trim() };
  return { field: match[1] as string, message: match[2] as string };
}

/** The message for exactly this field. */
export function errorFor(errors: readonly FieldError[], field: string): string | undefined {
  return errors.find((e) => e.field === field)?.message;
}

/** Whether an error's field is this field or lies inside it (`tools[0].function.name` is within `tools`). */
export function isWithin(errorField: string, field: string): boolean {
  return errorField === field || errorField.startsWith(`${field}.`) || errorField.startsWith(`${field}[`);
}

/** The message for this field or anything inside it (`tools` matches `tools[0].function.name`). */
export function errorWithin(errors: readonly FieldError[], field: string): FieldError | undefined {
  return errors.find((e) => e.field !== null && isWithin(e.field, field));
}

/**
 * The errors no input on the form shows: they go at the top of the form, with their field named so the
 * reader knows what they are about.
 */
export function unplacedErrors(errors: readonly FieldError[], isShown: (field: string) => boolean): string[] {
  return errors
    .filter((e) => e.field === null || !isShown(e.field))
    .map((e) => (e.field === null || e.field === "body" ? e.message : `${e.field}: ${e.message}`));
}

/** The index and part of a section field: `sections[2].title` → { index: 2, part: "title" }. */
export function sectionField(field: string): { index: number; part: string | null } | null {
  const match = /^sections\[(\d+)\](?:\.(\w+))?/.exec(field);
  if (!match) return null;
  return { index: Number(match[1]), part: match[2] ?? null };
}
