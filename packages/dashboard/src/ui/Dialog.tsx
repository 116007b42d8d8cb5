import { type FormEvent, type ReactNode, useId, useLayoutEffect, useRef } from "react";
import { unplacedErrors } from "../api/errors";
import { type FormFieldList, FormFields, missingFields, showsErrorsOf } from "../forms/FormFields";
import type { Form, FormValues } from "../forms/useForm";
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

interface FormDialogProps<V extends FormValues> {
  /** The values the fields show and change, and the errors shown with them (`useForm`). */
  form: Form<V>;
  /** Rendered in order, each with its label, hint and error; an error no field shows is listed above them. */
  fields: FormFieldList<V>;
  title: string;
  /** The form's accessible name. */
  name: string;
  /** A class beside `form`. */
  className?: string;
  submitLabel: string;
  pending: boolean;
  /** The form was submitted with every required field filled (the browser's own submission is prevented). */
  onSubmit: () => void;
  onClose: () => void;
  /** What the form shows after its fields. */
  children?: ReactNode;
}

/**
 * A dialog that creates or changes one thing: the fields it is given as data (`FormFields`), the errors no
 * field shows above them, Cancel and the submit button. A submit first shows what its required fields lack,
 * or else clears the errors shown and calls `onSubmit`, which shows any problem it finds. After a failed
 * submit the first problem is brought into view.
 */
export function FormDialog<V extends FormValues>({
  form,
  fields,
  title,
  name,
  className,
  submitLabel,
  pending,
  onSubmit,
  onClose,
  children,
}: FormDialogProps<V>) {
  const element = useRef<HTMLFormElement>(null);
  useRevealErrors(element, form.errors);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const missing = missingFields(fields, form.values);
    form.show(missing);
    if (missing.length === 0) onSubmit();
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <form
        ref={element}
        className={className ? `form ${className}` : "form"}
        onSubmit={submit}
        noValidate
        aria-label={name}
      >
        <FormAlert messages={unplacedErrors(form.errors, showsErrorsOf(fields))} />
        <FormFields fields={fields} form={form} />
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
