import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { connectionsQuery, type ModelConnection, useRemoveConnection } from "../../api/connection-queries";
import { CopyButton } from "../../ui/CopyButton";
import { type Column, RemoveDialog, SettingsCard, SettingsTable, useRemoval } from "../../ui/SettingsTable";
import { EmptyState } from "../../ui/States";
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
  const removing = useRemoval(useRemoveConnection(projectId), (c: ModelConnection) => c.id);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<ModelConnection | null>(null);

  return (
    <SettingsCard
      id="connections-heading"
      title="Model connections"
      intro={
        <>
          Where the playground of {projectName} runs prompts. Keys are encrypted on the server and never shown again. A
          run through the API names its connection by the id shown under the name.
        </>
      }
      action={
        canManage ? (
          <button type="button" className="button button-primary" onClick={() => setAdding(true)}>
            Add connection
          </button>
        ) : null
      }
    >
      <SettingsTable
        query={list}
        rows={list.data?.connections ?? []}
        rowKey={(c) => c.id}
        loading="Loading the connections…"
        empty={
          <EmptyState title="No model connections yet" level={3}>
            <p>
              {canManage
                ? "Add one to run prompts in the playground. Runs go through this server: the key never reaches a browser."
                : "An owner adds them; then prompts can be run in the playground."}
            </p>
          </EmptyState>
        }
        className="connection-table"
        columns={COLUMNS}
        actions={
          canManage
            ? (c) => [
                { label: "Edit", name: `Edit ${c.name}`, onClick: () => setEditing(c) },
                { label: "Remove", name: `Remove ${c.name}`, onClick: () => removing.ask(c) },
              ]
            : undefined
        }
      />
      {adding ? <ConnectionDialog projectId={projectId} onClose={() => setAdding(false)} /> : null}
      {editing ? <ConnectionDialog projectId={projectId} editing={editing} onClose={() => setEditing(null)} /> : null}
      <RemoveDialog removal={removing} title={(c) => `Remove ${c.name}?`}>
        {() => <p>The playground can no longer run through it, and its key is deleted. This cannot be undone.</p>}
      </RemoveDialog>
    </SettingsCard>
  );
}

const COLUMNS: Column<ModelConnection>[] = [
  {
    header: "Name",
    cell: (c) => (
      <>
        <span className="connection-name">{c.name}</span>
        {/* The id is what the API, the CLI and a run's `connection` take. */}
        <span className="connection-id">
          <code className="mono subtle">{c.id}</code>
          <CopyButton text={c.id} label="Copy id" name={`Copy id of ${c.name}`} small />
        </span>
      </>
    ),
  },
  { header: "Base URL", cell: (c) => <span className="mono connection-url">{c.base_url}</span> },
  {
    header: "Models",
    cell: (c) =>
      c.models.length === 0 ? (
        <span className="subtle">any</span>
      ) : (
        <span className="chips">
          {c.models.map((m) => (
            <span key={m} className="badge badge-outline mono">
              {m}
            </span>
          ))}
        </span>
      ),
  },
  {
    header: "Key",
    cell: (c) => (c.has_key ? <span className="badge">stored, hidden</span> : <span className="subtle">none</span>),
  },
  { header: "Added", cell: (c) => <TimeAgo iso={c.created_at} /> },
];
