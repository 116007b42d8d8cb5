import { EVENT_TYPES } from "@promptstore/core/events";
import { WEBHOOK_LIMITS, type WebhookView } from "@promptstore/core/webhooks";
import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { useRemoveWebhook, webhooksQuery } from "../../api/webhook-queries";
import { ConfirmDialog } from "../../ui/Dialog";
import { ShownOnceDialog } from "../../ui/Secret";
import { EmptyState, ErrorState, errorText, Loading } from "../../ui/States";
import { TimeAgo } from "../../ui/TimeAgo";
import { DeliveriesDialog } from "./DeliveriesDialog";
import { EndpointDialog } from "./EndpointDialog";
import { label, type Secret } from "./labels";
import "./webhooks.css";

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
                  {hook.secret_needs_rotation ? (
                    <span className="webhook-needs-rotation">
                      <span className="badge badge-warning">secret needs rotating</span>
                      <span className="webhook-needs-rotation-hint">
                        This server's key cannot open it. Rotate it under Edit, then give the receiver the new one.
                      </span>
                    </span>
                  ) : null}
                </td>
                <td data-label="Added">
                  <TimeAgo iso={hook.created_at} />
                </td>
                <td className="cell-actions">
                  <span className="row-actions">
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

      {secret ? (
        <ShownOnceDialog
          title={secret.title}
          secret={secret.secret}
          label="Signing secret"
          onClose={() => setSecret(null)}
        >
          <p>
            Requests to <span className="webhook-url">{secret.url}</span> carry <code>webhook-id</code>,{" "}
            <code>webhook-timestamp</code> and <code>webhook-signature</code> headers (Standard Webhooks). Verify each
            one with this secret, for example with the <code>standardwebhooks</code> library.
          </p>
        </ShownOnceDialog>
      ) : null}

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
