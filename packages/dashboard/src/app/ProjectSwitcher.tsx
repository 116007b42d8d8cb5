import { can } from "@promptstore/core/accounts/permissions";
import { useId, useState } from "react";
import { useNavigate } from "react-router";
import { useSession } from "../shell/session";
import { NewProjectDialog } from "./NewProjectDialog";

/** Every project of every organization of the user, grouped by organization; a native select works everywhere. */
export function ProjectSwitcher({ currentId }: { currentId: string | null }) {
  const session = useSession();
  const navigate = useNavigate();
  const id = useId();
  const [creating, setCreating] = useState(false);
  const ownerOrgs = session.memberships.filter((m) => can(m.role, "admin")).map((m) => m.org);
  const hasProjects = session.memberships.some((m) => m.projects.length > 0);

  return (
    <div className="switcher">
      <label htmlFor={id} className="visually-hidden">
        Project
      </label>
      {hasProjects ? (
        <select
          id={id}
          className="select"
          value={currentId ?? ""}
          onChange={(e) => {
            if (e.target.value) navigate(`/p/${e.target.value}/prompts`);
          }}
        >
          {currentId === null ? (
            <option value="" disabled>
              Choose a project…
            </option>
          ) : null}
          {session.memberships.map((m) =>
            m.projects.length === 0 ? null : (
              <optgroup key={m.org.id} label={m.org.name}>
                {m.projects.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </optgroup>
            ),
          )}
        </select>
      ) : null}
      {ownerOrgs.length > 0 ? (
        <button type="button" className="button button-small" onClick={() => setCreating(true)}>
          New project
        </button>
      ) : null}
      {creating ? (
        <NewProjectDialog
          orgs={ownerOrgs}
          onClose={() => setCreating(false)}
          onCreated={(projectId) => {
            setCreating(false);
            navigate(`/p/${projectId}/prompts`);
          }}
        />
      ) : null}
    </div>
  );
}
