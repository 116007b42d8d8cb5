import { can } from "@promptstore/core/dashboard";
import { useProject } from "../app/session";
import { EmptyState } from "../ui/States";
import { ApiKeys } from "./ApiKeys";
import { Members } from "./Members";
import { Usage } from "./Usage";
import "./settings.css";

/** Owners only: the project's keys, the organization's members, the plan and its usage. */
export default function Settings() {
  const context = useProject();
  if (!context) return null;
  const { project, membership } = context;
  if (!can(context.role, "admin")) {
    return (
      <div className="card">
        <title>Settings — Promptstore</title>
        <h1 className="visually-hidden">Settings</h1>
        <EmptyState title="Only owners can change settings">
          <p>API keys, members and the plan are managed by the owners of {membership.org.name}.</p>
        </EmptyState>
      </div>
    );
  }
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
      <ApiKeys projectId={project.id} projectName={project.name} />
      <Members orgId={membership.org.id} orgName={membership.org.name} />
      <Usage orgId={membership.org.id} currentProjectId={project.id} />
    </div>
  );
}
