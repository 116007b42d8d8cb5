import { DEFAULT_KEY_SCOPE, KEY_SCOPES, type KeyScope } from "@promptstore/core/accounts/key-scopes";
import type { ApiKeyView } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { apiKeysQuery, useCreateKey, useRevokeKey } from "../api/queries";
import { BusyButton, Options } from "../ui/Field";
import { ShownOnceDialog } from "../ui/Secret";
import { type Column, RemoveDialog, SettingsCard, SettingsTable, useRemoval } from "../ui/SettingsTable";
import { EmptyState, errorText } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";

const SCOPE_HELP: Record<KeyScope, string> = {
  read: "reads prompts only: what an application in production should hold",
  write: "also creates prompts and saves versions",
  publish: "also publishes, deletes prompts and manages webhooks",
};

export function ApiKeys({ projectId, projectName }: { projectId: string; projectName: string }) {
  const keys = useQuery(apiKeysQuery(projectId));
  const create = useCreateKey(projectId);
  const revoke = useRevokeKey(projectId);
  const [created, setCreated] = useState<string | null>(null);
  const revoking = useRemoval(revoke, (key: ApiKeyView) => key.id);
  const [scope, setScope] = useState<KeyScope>(DEFAULT_KEY_SCOPE);

  const createButton = (
    <div className="key-create">
      <label className="key-scope">
        <span>Scope</span>
        <select
          className="select"
          value={scope}
          onChange={(e) => setScope(e.target.value as KeyScope)}
          aria-describedby="key-scope-help"
        >
          <Options values={KEY_SCOPES} />
        </select>
      </label>
      <BusyButton
        type="button"
        busy={create.isPending}
        onClick={() => create.mutate(scope, { onSuccess: (key) => setCreated(key.key) })}
      >
        Create key
      </BusyButton>
      <p id="key-scope-help" className="subtle key-scope-help">
        {scope}: {SCOPE_HELP[scope]}
      </p>
    </div>
  );

  return (
    <SettingsCard
      id="keys-heading"
      title="API keys"
      intro={
        <>
          Keys of {projectName}: they read (and, by scope, write and publish) its prompts over the REST API and MCP.
          Last use is recorded to the minute.
        </>
      }
      action={createButton}
    >
      {create.isError ? (
        <p className="form-alert settings-alert" role="alert">
          {errorText(create.error)}
        </p>
      ) : null}
      <SettingsTable
        query={keys}
        rows={keys.data?.keys ?? []}
        rowKey={(key) => key.id}
        loading="Loading the keys…"
        empty={
          <EmptyState title="No API keys yet" level={3}>
            <p>Applications read prompts with a key of this project. Create one, and keep it on your server.</p>
          </EmptyState>
        }
        columns={COLUMNS}
        actions={(key) => (key.revoked_at ? [] : [{ label: "Revoke", onClick: () => revoking.ask(key) }])}
      />

      {created ? (
        <ShownOnceDialog
          title="Your new API key"
          secret={created}
          label="New API key"
          onClose={() => setCreated(null)}
        />
      ) : null}

      <RemoveDialog removal={revoking} title={(key) => `Revoke key ${key.prefix}…?`} confirmLabel="Revoke">
        {() => <p>Applications that use it are refused from their next request. This cannot be undone.</p>}
      </RemoveDialog>
    </SettingsCard>
  );
}

const COLUMNS: Column<ApiKeyView>[] = [
  { header: "Key", cell: (key) => <span className="hash">{key.prefix}…</span> },
  { header: "Scope", cell: (key) => <span className={`badge badge-scope-${key.scope}`}>{key.scope}</span> },
  { header: "Created", cell: (key) => <TimeAgo iso={key.created_at} /> },
  {
    header: "Last used",
    cell: (key) => (key.last_used_at ? <TimeAgo iso={key.last_used_at} /> : <span className="subtle">never</span>),
  },
  {
    header: "Status",
    cell: (key) =>
      key.revoked_at ? (
        <span className="badge badge-danger">
          revoked <TimeAgo iso={key.revoked_at} />
        </span>
      ) : (
        <span className="badge badge-production">active</span>
      ),
  },
];
