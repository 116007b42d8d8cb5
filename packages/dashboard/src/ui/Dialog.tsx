import { type ReactNode, useId, useLayoutEffect, useRef } from "react";

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
        <button
          type="button"
          className={danger ? "button button-danger" : "button button-primary"}
          onClick={onConfirm}
          disabled={pending}
          aria-busy={pending || undefined}
        >
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
