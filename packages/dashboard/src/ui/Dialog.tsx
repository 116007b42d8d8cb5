import { type FormEvent, type ReactNode, useId, useLayoutEffect, useRef } from "react";
import { type FieldError, unplacedErrors } from "../api/errors";
import { useRevealErrors } from "../forms/useRevealErrors";
import { BusyButton, FormAlert } from "./Field";

interface DialogProps {
  title: string;
  onClose: () => void;
  children: ReactNode;
}

/**
 * A modal `<dialog>`: the browser makes the rest of the page inert and keeps focus inside. Mounted
 * only while open; focus goes to the element marked `data-autofocus` (React's autoFocus runs before the
 * dialog is shown, so it cannot), and back to the opener when it closes. Escape calls `onClose`.
 */
export function Dialog({ title, onClose, children }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();

  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    dialog.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    return () => {
      dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      aria-modal="true"
      onCancel={(event) => {
        // The state that mounted the dialog decides whether it is open, not the browser.
        event.preventDefault();
        onClose();
      }}
    >
      <div className="dialog-inner">
        <h2 id={titleId}>{title}</h2>
        {children}
      </div>
    </dialog>
  );
}

interface ConfirmDialogProps {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  cancelLabel?: string;
  danger?: boolean;
  pending?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onClose: () => void;
}

/** A question with Cancel (focused first: the safe answer) and one action. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  cancelLabel = "Cancel",
  danger,
  pending,
  error,
  onConfirm,
  onClose,
}: ConfirmDialogProps) {
  return (
    <Dialog title={title} onClose={onClose}>
      {children}
      {error ? (
        <p className="form-alert" role="alert">
          {error}
        </p>
      ) : null}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose} data-autofocus>
          {cancelLabel}
        </button>
        <BusyButton
          type="button"
          className={danger ? "button button-danger" : "button button-primary"}
          busy={pending ?? false}
          onClick={onConfirm}
        >
          {confirmLabel}
        </BusyButton>
      </div>
    </Dialog>
  );
}

interface FormDialogProps {
  title: string;
  /** The form's accessible name. */
  name: string;
  /** A class beside `form`. */
  className?: string;
  errors: readonly FieldError[];
  /** Whether the form shows a field's error beside its input; the others are listed at the top. */
  shows: (field: string) => boolean;
  submitLabel: string;
  pending: boolean;
  /** The form was submitted (the browser's own submission is prevented). */
  onSubmit: () => void;
  onClose: () => void;
  children: ReactNode;
}

/**
 * A dialog that creates or changes one thing: its fields, the errors no field shows above them, Cancel and
 * the submit button. After a failed submit the first problem is brought into view.
 */
export function FormDialog({
  title,
  name,
  className,
  errors,
  shows,
  submitLabel,
  pending,
  onSubmit,
  onClose,
  children,
}: FormDialogProps) {
  const form = useRef<HTMLFormElement>(null);
  useRevealErrors(form, errors);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit();
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <form
        ref={form}
        className={className ? `form ${className}` : "form"}
        onSubmit={submit}
        noValidate
        aria-label={name}
      >
        <FormAlert messages={unplacedErrors(errors, shows)} />
        {children}
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <BusyButton type="submit" busy={pending}>
            {submitLabel}
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}
