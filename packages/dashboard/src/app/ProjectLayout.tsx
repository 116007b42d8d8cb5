import { useEffect } from "react";
import { Outlet } from "react-router";
import { NotFound } from "../shell/NotFound";
import { rememberProject, useProject } from "../shell/session";

/** A project of the user: anything else (another organization's, a deleted one) is "not found", as the API says. */
export function ProjectLayout() {
  const context = useProject();
  const projectId = context?.project.id;
  useEffect(() => {
    if (projectId) rememberProject(projectId);
  }, [projectId]);
  if (!context) {
    return <NotFound title="Project not found" message="This project does not exist, or you are not a member of it." />;
  }
  return <Outlet />;
}
