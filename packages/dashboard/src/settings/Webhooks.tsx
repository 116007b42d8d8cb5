import { EVENT_TYPES, type EventType } from "@promptstore/core/events";
import {
  createWebhookBody,
  type DeliveryStatus,
  type DeliveryView,
  updateWebhookBody,
  WEBHOOK_LIMITS,
  type WebhookView,
} from "@promptstore/core/webhooks";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useRef, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import {
  deliveriesQuery,
  useCreateWebhook,
  useRemoveWebhook,
  useRotateSecret,
  useUpdateWebhook,
  webhooksQuery,
} from "../api/webhook-queries";
import { useRevealErrors } from "../forms/useRevealErrors";
import { validate } from "../forms/validate";
import { CopyButton } from "../ui/CopyButton";
import { ConfirmDialog, Dialog } from "../ui/Dialog";
import { Field, FormAlert } from "../ui/Field";
import { plural } from "../ui/format";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo, useNow } from "../ui/TimeAgo";
import "./webhooks.css";

// By name, so an event type added to the core reads as itself here until it is given words.
const EVENT_LABELS: Record<string, string> = {
  "prompt.created": "Prompt created",
  "prompt.version_saved": "Version saved",
  "prompt.published": "Published",
  "prompt.deleted": "Deleted",
};
const EVENT_HELP: Record<string, string> = {
  "prompt.created": "a new prompt and its first version",
  "prompt.version_saved": "a save that makes a new version",
  "prompt.published": "production moves: publish or rollback",
  "prompt.deleted": "a prompt is deleted",
};
const label = (type: EventType): string => EVENT_LABELS[type] ?? type;

const STATUS_BADGE: Record<DeliveryStatus, string> = {
  pending: "badge badge-warning",
  delivered: "badge badge-production",
  failed: "badge badge-danger",
};

/** "now", "in 42 s", "in 3 min", "in 5 h": when the next attempt is due. */
export function timeUntil(iso: string, now: number): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (Number.isNaN(seconds)) return "unknown time";
  if (seconds < 5) return "now";
  if (seconds < 60) return `in ${seconds} s`;
  if (seconds < 3600) return `in ${Math.round(seconds / 60)} min`;
  return `in ${Math.round(seconds / 3600)} h`;
}

type Secret = { title: string; url: string; secret: string };

/** A project's webhook endpoints: list, add, change, remove, and each one's recent deliveries. */
export function Webhooks({ projectId, projectName }: { projectId: string; projectName: string }) {
  const list = useQuery(webhooksQuery(projectId));
  const remove = useRemoveWebhook(projectId);
  const [editing, setEditing] = useState<WebhookView | "new" | null>(null);
  const [removing, setRemoving] = useState<WebhookView | null>(null);
  const [watching, setWatching] = useState<WebhookView | null>(null);
  const [secret, setSecret] = useState<Secret | null>(null);
  const count = list.data?.webhooks.length ?? 0;
  const full = count >= WEBHOOK_LIMITS.endpointsPerProject;

  let body: ReactNode;
  if (list.isPending) body = <Loading label="Loading the webhooks…" />;
  else if (list.isError) body = <ErrorState error={list.error} onRetry={() => list.refetch()} />;
  else if (list.data.webhooks.length === 0) {
    body = (
      <EmptyState title="No webhooks yet" level={3}>
        <p>
          Add an endpoint and Promptstore POSTs to it whenever a prompt is created, saved or published, signed so your
          server can check that the request came from here. Failed deliveries are retried for 24 hours.
        </p>
      </EmptyState>
    );
  } else {
    body = (
      <div className="table-wrap">
        <table className="table table-stack webhook-table">
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Events</th>
              <th scope="col">Status</th>
              <th scope="col">Added</th>
              <th scope="col" className="cell-actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.webhooks.map((hook) => (
              <tr key={hook.id}>
                <td className="cell-primary">
                  <span className="webhook-url">{hook.url}</span>
                  {hook.description ? <span className="webhook-description">{hook.description}</span> : null}
                </td>
                <td data-label="Events">
                  <span className="webhook-events">
                    {EVENT_TYPES.filter((type) => hook.events.includes(type)).map((type) => (
                      <span key={type} className="badge badge-outline">
                        {label(type)}
                      </span>
                    ))}
                  </span>
                </td>
                <td data-label="Status">
                  {hook.enabled ? (
                    <span className="badge badge-production">enabled</span>
                  ) : (
                    <span className="badge">disabled</span>
                  )}
                </td>
                <td data-label="Added" className="webhook-added">
                  <TimeAgo iso={hook.created_at} />
                </td>
                <td className="cell-actions">
                  <span className="webhook-actions">
                    <button
                      type="button"
                      className="button button-small"
                      onClick={() => setWatching(hook)}
                      aria-label={`Deliveries to ${hook.url}`}
                    >
                      Deliveries
                    </button>
                    <button
                      type="button"
                      className="button button-small"
                      onClick={() => setEditing(hook)}
                      aria-label={`Edit ${hook.url}`}
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      className="button button-small"
                      onClick={() => {
                        remove.reset();
                        setRemoving(hook);
                      }}
                      aria-label={`Remove ${hook.url}`}
                    >
                      Remove
                    </button>
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <section className="card" aria-labelledby="webhooks-heading">
      <div className="card-header">
        <div>
          <h2 id="webhooks-heading">Webhooks</h2>
          <p>
            Signed POSTs to your endpoints when a prompt of {projectName} is created, saved or published.
            {list.data ? ` ${count} of ${WEBHOOK_LIMITS.endpointsPerProject} endpoints.` : ""}
          </p>
        </div>
        <button
          type="button"
          className="button button-primary"
          disabled={full}
          title={full ? `A project has at most ${WEBHOOK_LIMITS.endpointsPerProject} endpoints` : undefined}
          onClick={() => setEditing("new")}
        >
          Add endpoint
        </button>
      </div>
      {body}

      {editing ? (
        <EndpointDialog
          projectId={projectId}
          endpoint={editing === "new" ? null : editing}
          onClose={() => setEditing(null)}
          onSecret={(shown) => {
            setEditing(null);
            setSecret(shown);
          }}
        />
      ) : null}

      {secret ? <SecretDialog shown={secret} onClose={() => setSecret(null)} /> : null}

      {watching ? (
        <DeliveriesDialog projectId={projectId} endpoint={watching} onClose={() => setWatching(null)} />
      ) : null}

      {removing ? (
        <ConfirmDialog
          title="Remove this endpoint?"
          confirmLabel="Remove"
          danger
          pending={remove.isPending}
          error={remove.isError ? errorText(remove.error) : null}
          onClose={() => setRemoving(null)}
          onConfirm={() => remove.mutate(removing.id, { onSuccess: () => setRemoving(null) })}
        >
          <p>
            <span className="webhook-url">{removing.url}</span> gets no more events, and its deliveries still waiting
            are dropped. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

const FORM_FIELDS = new Set(["url", "description", "events", "enabled"]);

function EndpointDialog({
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

function SecretDialog({ shown, onClose }: { shown: Secret; onClose: () => void }) {
  return (
    <Dialog title={shown.title} onClose={onClose}>
      <p className="notice notice-warning">Store it now, it will not be shown again.</p>
      <p>
        Requests to <span className="webhook-url">{shown.url}</span> carry <code>webhook-id</code>,{" "}
        <code>webhook-timestamp</code> and <code>webhook-signature</code> headers (Standard Webhooks). Verify each one
        with this secret, for example with the <code>standardwebhooks</code> library.
      </p>
      <div className="secret">
        <input
          className="input mono"
          readOnly
          value={shown.secret}
          aria-label="Signing secret"
          onFocus={(e) => e.currentTarget.select()}
        />
      </div>
      <div className="dialog-actions">
        <CopyButton text={shown.secret} />
        <span className="spacer" />
        <button type="button" className="button button-primary" onClick={onClose} data-autofocus>
          Done
        </button>
      </div>
    </Dialog>
  );
}

function DeliveriesDialog({
  projectId,
  endpoint,
  onClose,
}: {
  projectId: string;
  endpoint: WebhookView;
  onClose: () => void;
}) {
  const deliveries = useQuery(deliveriesQuery(projectId, endpoint.id));
  const now = useNow();

  let body: ReactNode;
  if (deliveries.isPending) body = <Loading label="Loading the deliveries…" />;
  else if (deliveries.isError) body = <ErrorState error={deliveries.error} onRetry={() => deliveries.refetch()} />;
  else if (deliveries.data.deliveries.length === 0) {
    body = (
      <EmptyState title="Nothing sent yet" level={3}>
        <p>The next change to a prompt that this endpoint listens for is sent here.</p>
      </EmptyState>
    );
  } else {
    body = (
      <div className="table-wrap webhook-deliveries">
        <table className="table table-stack">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Last answer</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.deliveries.map((d) => (
              <DeliveryRow key={d.id} delivery={d} now={now} />
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <Dialog title="Recent deliveries" onClose={onClose}>
      <p>
        To <span className="webhook-url">{endpoint.url}</span>, newest first. Each event goes out only after the one
        before it was delivered or has failed for good.
      </p>
      {body}
      <div className="dialog-actions">
        <button type="button" className="button button-primary" onClick={onClose} data-autofocus>
          Close
        </button>
      </div>
    </Dialog>
  );
}

function DeliveryRow({ delivery: d, now }: { delivery: DeliveryView; now: number }) {
  return (
    <tr>
      <td className="cell-primary">
        <span className="webhook-delivery-event">{label(d.event_type)}</span>
        <span className="subtle webhook-delivery-meta">
          {d.prompt_id} · event {d.event_id} · <TimeAgo iso={d.created_at} />
        </span>
      </td>
      <td data-label="Status">
        <span className="webhook-status">
          <span className={STATUS_BADGE[d.status]}>{d.status}</span>
          <span className="subtle">{plural(d.attempts, "attempt")}</span>
        </span>
      </td>
      <td data-label="Last answer">
        {d.attempts === 0 ? (
          <span className="subtle">not tried yet</span>
        ) : (
          <span className="webhook-answer">
            <span>{d.last_response_code === null ? "no answer" : `HTTP ${d.last_response_code}`}</span>
            {d.last_error ? <span className="webhook-error">{d.last_error}</span> : null}
          </span>
        )}
      </td>
      <td data-label="Next attempt">
        {d.next_attempt_at ? (
          <time dateTime={d.next_attempt_at}>{timeUntil(d.next_attempt_at, now)}</time>
        ) : (
          <span className="subtle">—</span>
        )}
      </td>
    </tr>
  );
}
