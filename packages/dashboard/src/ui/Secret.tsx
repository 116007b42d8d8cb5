import type { ReactNode } from "react";
import { CopyButton } from "./CopyButton";
import { Dialog } from "./Dialog";

/** A secret as shown once: read-only, selected whole on focus, so that it can be copied by hand too. */
export function SecretField({ value, label, children }: { value: string; label: string; children?: ReactNode }) {
  return (
    <div className="secret">
      <input
        className="input mono"
        readOnly
        value={value}
        aria-label={label}
        onFocus={(e) => e.currentTarget.select()}
      />
      {children}
    </div>
  );
}

/** The dialog that shows a new secret (an API key, a signing secret) the one time the server answers it. */
export function ShownOnceDialog({
  title,
  secret,
  label,
  onClose,
  children,
}: {
  title: string;
  secret: string;
  label: string;
  onClose: () => void;
  /** What the secret is for, between the warning and the secret. */
  children?: ReactNode;
}) {
  return (
    <Dialog title={title} onClose={onClose}>
      <p className="notice notice-warning">Store it now, it will not be shown again.</p>
      {children}
      <SecretField value={secret} label={label} />
      <div className="dialog-actions">
        <CopyButton text={secret} />
        <span className="spacer" />
        <button type="button" className="button button-primary" onClick={onClose} data-autofocus>
          Done
        </button>
      </div>
    </Dialog>
  );
}
