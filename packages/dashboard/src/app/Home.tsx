import { can } from "@promptstore/core/accounts/permissions";
import { useState } from "react";
import { Navigate, useNavigate } from "react-router";
import { homeProject, useSession } from "../shell/session";
import { EmptyState } from "../ui/States";
import { NewProjectDialog } from "./NewProjectDialog";

/** "/": the project used last, or the first; a user without any project is told what to do. */
export function Home() {
  const session = useSession();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const projectId = homeProject(session);
  if (projectId) return <Navigate to={`/p/${projectId}/prompts`} replace />;

  const ownerOrgs = session.memberships.filter((m) => can(m.role, "admin")).map((m) => m.org);
  return (
    <div className="card">
      <title>Promptstore</title>
      <h1 className="visually-hidden">Promptstore</h1>
      <EmptyState
        title="No projects yet"
        actions={
          ownerOrgs.length > 0 ? (
            <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
              New project
            </button>
          ) : null
        }
      >
        <p>
          {ownerOrgs.length > 0
            ? "Create a project to start storing prompts. Each project has its own prompts and API keys."
            : "You are not in any project yet. Ask an owner of your organization to create one."}
        </p>
      </EmptyState>
      {creating ? (
        <NewProjectDialog
          orgs={ownerOrgs}
          onClose={() => setCreating(false)}
          onCreated={(id) => navigate(`/p/${id}/prompts`)}
        />
      ) : null}
    </div>
  );
}
