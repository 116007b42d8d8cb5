import { can } from "@promptstore/core/accounts/permissions";
import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { type GrantView, grantsQuery, useRevokeGrant } from "../api/oauth-queries";
import { useSession } from "../shell/session";
import { ConfirmDialog } from "../ui/Dialog";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";

/**
 * Settings → Connected apps: the MCP clients (Claude, ChatGPT, Cursor…) a person allowed, by project and
 * scope, with their last use; each can be revoked, and an organization's owners see and revoke all of its.
 */
export function ConnectedApps() {
  const session = useSession();
  const owned = session.memberships.filter((m) => can(m.role, "admin"));
  return (
    <>
      <GrantsCard
        orgId={null}
        heading="Connected apps"
        intro="MCP clients you allowed to act as you, each within one project and scope. Revoking one ends its access at its next request."
      />
      {owned.map((m) => (
        <GrantsCard
          key={m.org.id}
          orgId={m.org.id}
          heading={`Connected apps in ${m.org.name}`}
          intro="Every member's connected apps in this organization (you are an owner)."
        />
      ))}
    </>
  );
}

function GrantsCard({ orgId, heading, intro }: { orgId: string | null; heading: string; intro: string }) {
  const grants = useQuery(grantsQuery(orgId));
  const revoke = useRevokeGrant();
  const [revoking, setRevoking] = useState<GrantView | null>(null);
  const headingId = `apps-heading-${orgId ?? "mine"}`;
  let body: ReactNode;
  if (grants.isPending) body = <Loading label="Loading the connected apps…" />;
  else if (grants.isError) body = <ErrorState error={grants.error} onRetry={() => grants.refetch()} />;
  else if (grants.data.grants.length === 0) {
    body = (
      <EmptyState title="No connected apps" level={3}>
        <p>Connect an MCP client to {window.location.origin}/api/v2/mcp and sign in: it appears here.</p>
      </EmptyState>
    );
  } else {
    body = (
      <div className="table-wrap">
        <table className="table table-stack">
          <thead>
            <tr>
              <th scope="col">{orgId ? "App and person" : "App"}</th>
              <th scope="col">Project</th>
              <th scope="col">Scope</th>
              <th scope="col">Last used</th>
              <th scope="col" className="cell-actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {grants.data.grants.map((grant) => (
              <tr key={grant.id}>
                <td className="cell-primary">
                  {grant.client_name}
                  {orgId ? <div className="small subtle">{grant.user_email}</div> : null}
                </td>
                <td data-label="Project">{grant.project_name}</td>
                <td data-label="Scope">
                  <span className={`badge badge-scope-${grant.scope}`}>{grant.scope}</span>
                </td>
                <td data-label="Last used">
                  {grant.last_used_at ? <TimeAgo iso={grant.last_used_at} /> : <span className="subtle">never</span>}
                </td>
                <td className="cell-actions">
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Revoke ${grant.client_name} (${grant.project_name})`}
                    onClick={() => {
                      revoke.reset();
                      setRevoking(grant);
                    }}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }
  return (
    <section className="card" aria-labelledby={headingId}>
      <div className="card-header">
        <div>
          <h2 id={headingId}>{heading}</h2>
          <p>{intro}</p>
        </div>
      </div>
      {body}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke ${revoking.client_name}?`}
          confirmLabel="Revoke"
          danger
          pending={revoke.isPending}
          error={revoke.error ? errorText(revoke.error) : null}
          onConfirm={() => revoke.mutate(revoking.id, { onSuccess: () => setRevoking(null) })}
          onClose={() => setRevoking(null)}
        >
          <p>
            {revoking.client_name} loses access to {revoking.project_name} at its next request. To use it again, connect
            it and sign in again.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
