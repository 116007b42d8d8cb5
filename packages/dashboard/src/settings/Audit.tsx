import { can } from "@promptstore/core/accounts/permissions";
import { useProject } from "../shell/session";
import { EmptyState } from "../ui/States";
import { AuditTrail } from "./AuditTrail";
import "./settings.css";

/** The project's audit trail: owners only, as on the server (it names members and keys). */
export default function Audit() {
  const context = useProject();
  if (!context) return null;
  const { project, membership } = context;
  if (!can(context.role, "admin")) {
    return (
      <div className="card">
        <title>Audit — Promptstore</title>
        <h1 className="visually-hidden">Audit</h1>
        <EmptyState title="Only owners can read the audit trail">
          <p>It names the members and keys of {membership.org.name}; ask one of its owners.</p>
        </EmptyState>
      </div>
    );
  }
  return (
    <div className="stack-lg">
      <title>{`Audit · ${project.name} — Promptstore`}</title>
      <header className="page-header">
        <div>
          <h1>Audit</h1>
          <p>
            {project.name} · organization {membership.org.name}
          </p>
        </div>
      </header>
      <AuditTrail projectId={project.id} projectName={project.name} />
    </div>
  );
}
