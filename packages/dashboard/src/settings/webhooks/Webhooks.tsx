import { EVENT_TYPES } from "@promptstore/core/events";
import { WEBHOOK_LIMITS, type WebhookView } from "@promptstore/core/webhooks";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useRemoveWebhook, webhooksQuery } from "../../api/webhook-queries";
import { ShownOnceDialog } from "../../ui/Secret";
import { type Column, RemoveDialog, SettingsCard, SettingsTable, useRemoval } from "../../ui/SettingsTable";
import { EmptyState } from "../../ui/States";
import { TimeAgo } from "../../ui/TimeAgo";
import { DeliveriesDialog } from "./DeliveriesDialog";
import { EndpointDialog } from "./EndpointDialog";
import { label, type Secret } from "./labels";
import "./webhooks.css";

/** A project's webhook endpoints: list, add, change, remove, and each one's recent deliveries. */
export function Webhooks({ projectId, projectName }: { projectId: string; projectName: string }) {
  const list = useQuery(webhooksQuery(projectId));
  const removing = useRemoval(useRemoveWebhook(projectId), (hook: WebhookView) => hook.id);
  const [editing, setEditing] = useState<WebhookView | "new" | null>(null);
  const [watching, setWatching] = useState<WebhookView | null>(null);
  const [secret, setSecret] = useState<Secret | null>(null);
  const count = list.data?.webhooks.length ?? 0;
  const full = count >= WEBHOOK_LIMITS.endpointsPerProject;

  return (
    <SettingsCard
      id="webhooks-heading"
      title="Webhooks"
      intro={
        <>
          Signed POSTs to your endpoints when a prompt of {projectName} is created, saved or published.
          {list.data ? ` ${count} of ${WEBHOOK_LIMITS.endpointsPerProject} endpoints.` : ""}
        </>
      }
      action={
        <button
          type="button"
          className="button button-primary"
          disabled={full}
          title={full ? `A project has at most ${WEBHOOK_LIMITS.endpointsPerProject} endpoints` : undefined}
          onClick={() => setEditing("new")}
        >
          Add endpoint
        </button>
      }
    >
      <SettingsTable
        query={list}
        rows={list.data?.webhooks ?? []}
        rowKey={(hook) => hook.id}
        loading="Loading the webhooks…"
        empty={
          <EmptyState title="No webhooks yet" level={3}>
            <p>
              Add an endpoint and Promptstore POSTs to it whenever a prompt is created, saved or published, signed so
              your server can check that the request came from here. Failed deliveries are retried for 24 hours.
            </p>
          </EmptyState>
        }
        className="webhook-table"
        columns={COLUMNS}
        actions={(hook) => [
          { label: "Deliveries", name: `Deliveries to ${hook.url}`, onClick: () => setWatching(hook) },
          { label: "Edit", name: `Edit ${hook.url}`, onClick: () => setEditing(hook) },
          { label: "Remove", name: `Remove ${hook.url}`, onClick: () => removing.ask(hook) },
        ]}
      />

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

      <RemoveDialog removal={removing} title={() => "Remove this endpoint?"}>
        {(hook) => (
          <p>
            <span className="webhook-url">{hook.url}</span> gets no more events, and its deliveries still waiting are
            dropped. This cannot be undone.
          </p>
        )}
      </RemoveDialog>
    </SettingsCard>
  );
}

const COLUMNS: Column<WebhookView>[] = [
  {
    header: "Endpoint",
    cell: (hook) => (
      <>
        <span className="webhook-url">{hook.url}</span>
        {hook.description ? <span className="webhook-description">{hook.description}</span> : null}
      </>
    ),
  },
  {
    header: "Events",
    cell: (hook) => (
      <span className="webhook-events">
        {EVENT_TYPES.filter((type) => hook.events.includes(type)).map((type) => (
          <span key={type} className="badge badge-outline">
            {label(type)}
          </span>
        ))}
      </span>
    ),
  },
  {
    header: "Status",
    cell: (hook) => (
      <>
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
      </>
    ),
  },
  { header: "Added", cell: (hook) => <TimeAgo iso={hook.created_at} /> },
];
