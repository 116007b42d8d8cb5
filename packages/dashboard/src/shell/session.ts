import type { Membership, ProjectSummary, Role, SessionView } from "@promptstore/core/dashboard";
import { useQuery } from "@tanstack/react-query";
import { useParams } from "react-router";
import { sessionQuery } from "../api/queries";

/** The session inside the signed-in part of the app, where `RequireSession` guarantees one. */
export function useSession(): SessionView {
  const { data } = useQuery(sessionQuery);
  if (!data) throw new Error("useSession outside RequireSession");
  return data;
}

export interface ProjectContext {
  project: ProjectSummary;
  membership: Membership;
  role: Role;
}

export function findProject(session: SessionView, projectId: string): ProjectContext | null {
  for (const membership of session.memberships) {
    const project = membership.projects.find((p) => p.id === projectId);
    if (project) return { project, membership, role: membership.role };
  }
  return null;
}

/** The project of the current route, as the session lists it; null when the user has no such project. */
export function useProject(): ProjectContext | null {
  const session = useSession();
  const { projectId } = useParams();
  return projectId ? findProject(session, projectId) : null;
}

const LAST_PROJECT = "promptstore.lastProject";

export function rememberProject(projectId: string): void {
  try {
    localStorage.setItem(LAST_PROJECT, projectId);
  } catch {
    // Storage may be disabled; the first project is a fine default.
  }
}

/** Where "/" goes: the project used last, if the user still has it, else the first one. */
export function homeProject(session: SessionView): string | null {
  let last: string | null = null;
  try {
    last = localStorage.getItem(LAST_PROJECT);
  } catch {
    last = null;
  }
  if (last && findProject(session, last)) return last;
  for (const membership of session.memberships) {
    const first = membership.projects[0];
    if (first) return first.id;
  }
  return null;
}

/** A `next` parameter that stays on this site: a path, never `//host` or a URL. */
export function safeNext(next: string | null): string {
  if (next?.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\")) return next;
  return "/";
}
