import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { connectionsQuery, type ModelConnection, useRemoveConnection } from "../../api/connection-queries";
import { CopyButton } from "../../ui/CopyButton";
import { ConfirmDialog } from "../../ui/Dialog";
import { EmptyState, ErrorState, errorText, Loading } from "../../ui/States";
import { TimeAgo } from "../../ui/TimeAgo";
import { ConnectionDialog } from "./ConnectionDialog";

/**
 * The model connections the playground runs through (owners): an OpenAI-compatible base URL, a key kept
 * on the server, the models offered. Others see the list without the buttons, as far as the API lets them.
 */
export function ModelConnections({
  projectId,
  projectName,
  canManage,
}: {
  projectId: string;
  projectName: string;
  canManage: boolean;
}) {
  const list = useQuery(connectionsQuery(projectId));
  const remove = useRemoveConnection(projectId);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<ModelConnection | null>(null);
  const [removing, setRemoving] = useState<ModelConnection | null>(null);

  let body: ReactNode;
  if (list.isPending) body = <Loading label="Loading the connections…" />;
  else if (list.isError) body = <ErrorState error={list.error} onRetry={() => list.refetch()} />;
  else if (list.data.connections.length === 0) {
    body = (
      <EmptyState title="No model connections yet" level={3}>
        <p>
          {canManage
            ? "Add one to run prompts in the playground. Runs go through this server: the key never reaches a browser."
            : "An owner adds them; then prompts can be run in the playground."}
        </p>
      </EmptyState>
    );
  } else {
    body = (
      <div className="table-wrap">
        <table className="table table-stack connection-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Base URL</th>
              <th scope="col">Models</th>
              <th scope="col">Key</th>
              <th scope="col">Added</th>
              {canManage ? (
                <th scope="col" className="cell-actions">
                  <span className="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {list.data.connections.map((c) => (
              <tr key={c.id}>
                <td className="cell-primary">
                  <span className="connection-name">{c.name}</span>
                  {/* The id is what the API, the CLI and a run's `connection` take. */}
                  <span className="connection-id">
                    <code className="mono subtle">{c.id}</code>
                    <CopyButton text={c.id} label="Copy id" name={`Copy id of ${c.name}`} small />
                  </span>
                </td>
                <td data-label="Base URL">
                  <span className="mono connection-url">{c.base_url}</span>
                </td>
                <td data-label="Models">
                  {c.models.length === 0 ? (
                    <span className="subtle">any</span>
                  ) : (
                    <span className="chips">
                      {c.models.map((m) => (
                        <span key={m} className="badge badge-outline mono">
                          {m}
                        </span>
                      ))}
                    </span>
                  )}
                </td>
                <td data-label="Key">
                  {c.has_key ? <span className="badge">stored, hidden</span> : <span className="subtle">none</span>}
                </td>
                <td data-label="Added">
                  <TimeAgo iso={c.created_at} />
                </td>
                {canManage ? (
                  <td className="cell-actions">
                    <span className="row-actions">
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Edit ${c.name}`}
                        onClick={() => setEditing(c)}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Remove ${c.name}`}
                        onClick={() => {
                          remove.reset();
                          setRemoving(c);
                        }}
                      >
                        Remove
                      </button>
                    </span>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <section className="card" aria-labelledby="connections-heading">
      <div className="card-header">
        <div>
          <h2 id="connections-heading">Model connections</h2>
          <p>
            Where the playground of {projectName} runs prompts. Keys are encrypted on the server and never shown again.
            A run through the API names its connection by the id shown under the name.
          </p>
        </div>
        {canManage ? (
          <button type="button" className="button button-primary" onClick={() => setAdding(true)}>
            Add connection
          </button>
        ) : null}
      </div>
      {body}
      {adding ? <ConnectionDialog projectId={projectId} onClose={() => setAdding(false)} /> : null}
      {editing ? <ConnectionDialog projectId={projectId} editing={editing} onClose={() => setEditing(null)} /> : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove ${removing.name}?`}
          confirmLabel="Remove"
          danger
          pending={remove.isPending}
          error={remove.isError ? errorText(remove.error) : null}
          onClose={() => setRemoving(null)}
          onConfirm={() => remove.mutate(removing.id, { onSuccess: () => setRemoving(null) })}
        >
          <p>The playground can no longer run through it, and its key is deleted. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
