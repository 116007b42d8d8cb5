import { can } from "@promptstore/core/accounts/permissions";
import { useProject } from "../shell/session";
import { EmptyState } from "../ui/States";
import { ApiKeys } from "./ApiKeys";
import { ModelConnections } from "./connections/ModelConnections";
import { Labels } from "./Labels";
import { Members } from "./Members";
import { Usage } from "./Usage";
import { Webhooks } from "./webhooks/Webhooks";
import "./settings.css";

/**
 * Owners: the project's keys and webhooks, the organization's members, the plan and its usage. Editors: the
 * project's webhooks only. Viewers: nothing to change here.
 */
export default function Settings() {
  const context = useProject();
  if (!context) return null;
  const { project, membership } = context;
  if (!can(context.role, "write")) {
    return (
      <div className="card">
        <title>Settings — Promptstore</title>
        <h1 className="visually-hidden">Settings</h1>
        <EmptyState title="Only owners and editors can change settings">
          <p>
            API keys, members and the plan are managed by the owners of {membership.org.name}; webhooks by its owners
            and editors.
          </p>
        </EmptyState>
      </div>
    );
  }
  const owner = can(context.role, "admin");
  return (
    <div className="stack-lg">
      <title>{`Settings · ${project.name} — Promptstore`}</title>
      <header className="page-header">
        <div>
          <h1>Settings</h1>
          <p>
            {project.name} · organization {membership.org.name}
          </p>
        </div>
      </header>
      {owner ? <ApiKeys projectId={project.id} projectName={project.name} /> : null}
      {owner ? <Labels projectId={project.id} projectName={project.name} /> : null}
      <ModelConnections projectId={project.id} projectName={project.name} canManage={owner} />
      <Webhooks projectId={project.id} projectName={project.name} />
      {owner ? <Members orgId={membership.org.id} orgName={membership.org.name} /> : null}
      {owner ? <Usage orgId={membership.org.id} currentProjectId={project.id} /> : null}
    </div>
  );
}
