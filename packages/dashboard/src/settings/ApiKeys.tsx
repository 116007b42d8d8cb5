import { DEFAULT_KEY_SCOPE, KEY_SCOPES, type KeyScope } from "@promptstore/core/accounts/key-scopes";
import type { ApiKeyView } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { useState } from "react";
import { apiKeysQuery, useCreateKey, useRevokeKey } from "../api/queries";
import { ConfirmDialog } from "../ui/Dialog";
import { ShownOnceDialog } from "../ui/Secret";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
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
  const [revoking, setRevoking] = useState<ApiKeyView | null>(null);
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
          {KEY_SCOPES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        className="button button-primary"
        disabled={create.isPending}
        aria-busy={create.isPending || undefined}
        onClick={() => create.mutate(scope, { onSuccess: (key) => setCreated(key.key) })}
      >
        Create key
      </button>
      <p id="key-scope-help" className="subtle key-scope-help">
        {scope}: {SCOPE_HELP[scope]}
      </p>
    </div>
  );

  let body: ReactNode;
  if (keys.isPending) body = <Loading label="Loading the keys…" />;
  else if (keys.isError) body = <ErrorState error={keys.error} onRetry={() => keys.refetch()} />;
  else if (keys.data.keys.length === 0) {
    body = (
      <EmptyState title="No API keys yet" level={3}>
        <p>Applications read prompts with a key of this project. Create one, and keep it on your server.</p>
      </EmptyState>
    );
  } else {
    body = (
      <div className="table-wrap">
        <table className="table table-stack">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col" className="cell-actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.keys.map((key) => (
              <tr key={key.id}>
                <td className="cell-primary">
                  <span className="hash">{key.prefix}…</span>
                </td>
                <td data-label="Scope">
                  <span className={`badge badge-scope-${key.scope}`}>{key.scope}</span>
                </td>
                <td data-label="Created">
                  <TimeAgo iso={key.created_at} />
                </td>
                <td data-label="Last used">
                  {key.last_used_at ? <TimeAgo iso={key.last_used_at} /> : <span className="subtle">never</span>}
                </td>
                <td data-label="Status">
                  {key.revoked_at ? (
                    <span className="badge badge-danger">
                      revoked <TimeAgo iso={key.revoked_at} />
                    </span>
                  ) : (
                    <span className="badge badge-production">active</span>
                  )}
                </td>
                <td className="cell-actions">
                  {key.revoked_at ? null : (
                    <button
                      type="button"
                      className="button button-small"
                      onClick={() => {
                        revoke.reset();
                        setRevoking(key);
                      }}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <section className="card" aria-labelledby="keys-heading">
      <div className="card-header">
        <div>
          <h2 id="keys-heading">API keys</h2>
          <p>
            Keys of {projectName}: they read (and, by scope, write and publish) its prompts over the REST API and MCP.
            Last use is recorded to the minute.
          </p>
        </div>
        {createButton}
      </div>
      {create.isError ? (
        <p className="form-alert settings-alert" role="alert">
          {errorText(create.error)}
        </p>
      ) : null}
      {body}

      {created ? (
        <ShownOnceDialog
          title="Your new API key"
          secret={created}
          label="New API key"
          onClose={() => setCreated(null)}
        />
      ) : null}

      {revoking ? (
        <ConfirmDialog
          title={`Revoke key ${revoking.prefix}…?`}
          confirmLabel="Revoke"
          danger
          pending={revoke.isPending}
          error={revoke.isError ? errorText(revoke.error) : null}
          onClose={() => setRevoking(null)}
          onConfirm={() => revoke.mutate(revoking.id, { onSuccess: () => setRevoking(null) })}
        >
          <p>Applications that use it are refused from their next request. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
