import { EVENT_TYPES, type EventType } from "@promptstore/core/events";
import { createWebhookBody, updateWebhookBody, WEBHOOK_LIMITS, type WebhookView } from "@promptstore/core/webhooks";
import { useState } from "react";
import { errorFor, type FieldError } from "../../api/errors";
import { useCreateWebhook, useRotateSecret, useUpdateWebhook } from "../../api/webhook-queries";
import { validate } from "../../forms/validate";
import { ConfirmDialog, FormDialog } from "../../ui/Dialog";
import { TextField } from "../../ui/Field";
import { errorText, fieldErrorOf } from "../../ui/States";
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
  const pending = create.isPending || update.isPending;

  const serverError = (error: unknown) => setErrors([fieldErrorOf(error)]);

  const submit = () => {
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
    <FormDialog
      title={endpoint ? "Edit endpoint" : "Add an endpoint"}
      name="Webhook endpoint"
      className="webhook-form"
      errors={errors}
      shows={(f) => FORM_FIELDS.has(f) || f.startsWith("events")}
      submitLabel={endpoint ? "Save" : "Add endpoint"}
      pending={pending}
      onSubmit={submit}
      onClose={onClose}
    >
      <TextField
        label="URL"
        error={errorFor(errors, "url")}
        hint="An http:// or https:// address on the internet; requests come from this server."
        type="url"
        placeholder="https://example.com/hooks/promptstore"
        value={url}
        onChange={setUrl}
        data-autofocus
      />
      <TextField
        label="Description"
        optional
        error={errorFor(errors, "description")}
        maxLength={WEBHOOK_LIMITS.descriptionLength}
        placeholder="What receives these events"
        value={description}
        onChange={setDescription}
      />
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
    </FormDialog>
  );
}
