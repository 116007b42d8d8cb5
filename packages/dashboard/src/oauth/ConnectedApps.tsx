import { can } from "@promptstore/core/accounts/permissions";
import { useQuery } from "@tanstack/react-query";
import { type GrantView, grantsQuery, useRevokeGrant } from "../api/oauth-queries";
import { useSession } from "../shell/session";
import { type Column, RemoveDialog, SettingsCard, SettingsTable, useRemoval } from "../ui/SettingsTable";
import { EmptyState } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import "./oauth.css";

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
  const revoking = useRemoval(useRevokeGrant(), (grant: GrantView) => grant.id);
  const columns: Column<GrantView>[] = [
    {
      header: orgId ? "App and person" : "App",
      cell: (grant) => (
        <>
          {grant.client_name}
          {orgId ? <div className="small subtle grant-person">{grant.user_email}</div> : null}
        </>
      ),
    },
    { header: "Project", cell: (grant) => grant.project_name },
    { header: "Scope", cell: (grant) => <span className={`badge badge-scope-${grant.scope}`}>{grant.scope}</span> },
    {
      header: "Last used",
      cell: (grant) =>
        grant.last_used_at ? <TimeAgo iso={grant.last_used_at} /> : <span className="subtle">never</span>,
    },
  ];
  return (
    <SettingsCard id={`apps-heading-${orgId ?? "mine"}`} title={heading} intro={intro}>
      <SettingsTable
        query={grants}
        rows={grants.data?.grants ?? []}
        rowKey={(grant) => grant.id}
        loading="Loading the connected apps…"
        empty={
          <EmptyState title="No connected apps" level={3}>
            <p>Connect an MCP client to {window.location.origin}/api/v2/mcp and sign in: it appears here.</p>
          </EmptyState>
        }
        columns={columns}
        actions={(grant) => [
          {
            label: "Revoke",
            name: `Revoke ${grant.client_name} (${grant.project_name})`,
            onClick: () => revoking.ask(grant),
          },
        ]}
      />
      <RemoveDialog removal={revoking} title={(grant) => `Revoke ${grant.client_name}?`} confirmLabel="Revoke">
        {(grant) => (
          <p>
            {grant.client_name} loses access to {grant.project_name} at its next request. To use it again, connect it
            and sign in again.
          </p>
        )}
      </RemoveDialog>
    </SettingsCard>
  );
}
