import { type RefObject, useEffect } from "react";

/**
 * After a failed submit, brings the first problem into view: the first invalid input gets focus (so a
 * keyboard user is there to fix it), or else the first message scrolls into view. Without this, the
 * error of a long form can appear above the fold, next to a field the user cannot see.
 */
export function useRevealErrors(form: RefObject<HTMLElement | null>, errors: readonly unknown[]): void {
  useEffect(() => {
    if (errors.length === 0 || !form.current) return;
    const first = form.current.querySelector<HTMLElement>('[aria-invalid="true"], .field-error, .form-alert');
    if (!first) return;
    if (first.matches("input, textarea, select")) first.focus();
    else first.scrollIntoView({ block: "center" });
  }, [form, errors]);
}
