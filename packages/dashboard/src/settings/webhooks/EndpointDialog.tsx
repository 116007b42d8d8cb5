import { EVENT_TYPES, type EventType } from "@promptstore/core/events";
import { createWebhookBody, updateWebhookBody, WEBHOOK_LIMITS, type WebhookView } from "@promptstore/core/webhooks";
import { type FormEvent, useRef, useState } from "react";
import { isApiError } from "../../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../../api/errors";
import { useCreateWebhook, useRotateSecret, useUpdateWebhook } from "../../api/webhook-queries";
import { useRevealErrors } from "../../forms/useRevealErrors";
import { validate } from "../../forms/validate";
import { ConfirmDialog, Dialog } from "../../ui/Dialog";
import { Field, FormAlert } from "../../ui/Field";
import { errorText } from "../../ui/States";
import { EVENT_HELP, label, type Secret } from "./labels";

const FORM_FIELDS = new Set(["url", "description", "events", "enabled"]);

/** Adds an endpoint, or changes one (and rotates its secret). */
export function EndpointDialog({
  projectId,
  endpoint,
  onClose,
  onSecret,
}: {
  projectId: string;
  endpoint: WebhookView | null;
  onClose: () => void;
  onSecret: (shown: Secret) => void;
}) {
  const create = useCreateWebhook(projectId);
  const update = useUpdateWebhook(projectId, endpoint?.id ?? "");
  const rotate = useRotateSecret(projectId, endpoint?.id ?? "");
  const [url, setUrl] = useState(endpoint?.url ?? "");
  const [description, setDescription] = useState(endpoint?.description ?? "");
  const [events, setEvents] = useState<EventType[]>(endpoint?.events ?? [...EVENT_TYPES]);
  const [enabled, setEnabled] = useState(endpoint?.enabled ?? true);
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useRevealErrors(form, errors);
  const pending = create.isPending || update.isPending;

  const serverError = (error: unknown) =>
    setErrors([
      isApiError(error) ? { field: error.field, message: error.detail } : { field: null, message: errorText(error) },
    ]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    // In the order the checkboxes show, whatever order they were ticked in.
    const chosen = EVENT_TYPES.filter((type) => events.includes(type));
    if (endpoint === null) {
      const body = validate(createWebhookBody, { url, events: chosen, ...(description ? { description } : {}) });
      if (!body.ok) return setErrors(body.errors);
      setErrors([]);
      create.mutate(body.data, {
        onSuccess: (created) =>
          onSecret({ title: "Your new endpoint's signing secret", url: created.url, secret: created.secret }),
        onError: serverError,
      });
    } else {
      const body = validate(updateWebhookBody, { url, events: chosen, description, enabled });
      if (!body.ok) return setErrors(body.errors);
      setErrors([]);
      update.mutate(body.data, { onSuccess: onClose, onError: serverError });
    }
  };

  const eventsError = errors.find((e) => e.field?.startsWith("events"))?.message;

  if (confirmRotate && endpoint) {
    return (
      <ConfirmDialog
        title="Rotate the signing secret?"
        confirmLabel="Rotate secret"
        danger
        pending={rotate.isPending}
        error={rotate.isError ? errorText(rotate.error) : null}
        onClose={() => setConfirmRotate(false)}
        onConfirm={() =>
          rotate.mutate(undefined, {
            onSuccess: (rotated) =>
              onSecret({ title: "The endpoint's new signing secret", url: rotated.url, secret: rotated.secret }),
          })
        }
      >
        <p>
          Every request from now on, retries included, is signed with a new secret. Until your receiver has it, it will
          refuse them; refused deliveries are retried for 24 hours.
        </p>
      </ConfirmDialog>
    );
  }

  return (
    <Dialog title={endpoint ? "Edit endpoint" : "Add an endpoint"} onClose={onClose}>
      <form ref={form} className="form webhook-form" onSubmit={submit} noValidate aria-label="Webhook endpoint">
        <FormAlert messages={unplacedErrors(errors, (f) => FORM_FIELDS.has(f) || f.startsWith("events"))} />
        <Field
          label="URL"
          error={errorFor(errors, "url")}
          hint="An http:// or https:// address on the internet; requests come from this server."
        >
          {(control) => (
            <input
              {...control}
              className="input mono"
              type="url"
              inputMode="url"
              autoComplete="off"
              spellCheck={false}
              placeholder="https://example.com/hooks/promptstore"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              data-autofocus
            />
          )}
        </Field>
        <Field label="Description" optional error={errorFor(errors, "description")}>
          {(control) => (
            <input
              {...control}
              className="input"
              autoComplete="off"
              maxLength={WEBHOOK_LIMITS.descriptionLength}
              placeholder="What receives these events"
              value={description}
              onChange={(e) => setDescription(e.target.value)}
            />
          )}
        </Field>
        <fieldset
          className="webhook-event-choices"
          aria-invalid={eventsError ? true : undefined}
          aria-describedby={eventsError ? "webhook-events-error" : undefined}
        >
          <legend className="field-label">Events</legend>
          {EVENT_TYPES.map((type) => (
            <label key={type} className="checkbox webhook-event-choice">
              <input
                type="checkbox"
                checked={events.includes(type)}
                onChange={(e) =>
                  setEvents((current) => (e.target.checked ? [...current, type] : current.filter((t) => t !== type)))
                }
              />
              <span>
                {label(type)}
                {EVENT_HELP[type] ? <span className="subtle"> · {EVENT_HELP[type]}</span> : null}
              </span>
            </label>
          ))}
          {eventsError ? (
            <p className="field-error" id="webhook-events-error">
              {eventsError}
            </p>
          ) : null}
        </fieldset>
        {endpoint ? (
          <>
            <label className="checkbox">
              <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
              Enabled: new events are queued and sent
            </label>
            <div className="webhook-rotate">
              <p className="field-hint">
                The signing secret was shown once, when the endpoint was added. Lost it, or leaked it? Rotate it.
              </p>
              <button type="button" className="button button-small" onClick={() => setConfirmRotate(true)}>
                Rotate secret…
              </button>
            </div>
          </>
        ) : null}
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={pending} aria-busy={pending || undefined}>
            {endpoint ? "Save" : "Add endpoint"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
