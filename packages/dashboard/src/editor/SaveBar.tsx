import { errorFor, type FieldError } from "../api/errors";
import { Field } from "../ui/Field";

/** The change message and the two ways to save: as a new version, or as a new version in production. */
export function SaveBar({
  message,
  errors,
  pending,
  disabled,
  onMessage,
  onPublish,
}: {
  message: string;
  errors: FieldError[];
  pending: boolean;
  disabled: boolean;
  onMessage: (message: string) => void;
  onPublish: () => void;
}) {
  return (
    <div className="save-bar">
      <Field label="Change message" optional error={errorFor(errors, "message")} className="save-message">
        {(control) => (
          <input
            {...control}
            className="input"
            value={message}
            placeholder="What changed, for the history"
            onChange={(e) => onMessage(e.target.value)}
          />
        )}
      </Field>
      <div className="save-actions">
        <button type="submit" className="button" disabled={disabled} aria-busy={pending || undefined}>
          Save version
        </button>
        <button type="button" className="button button-primary" disabled={disabled} onClick={onPublish}>
          Save and publish
        </button>
      </div>
    </div>
  );
}
