/**
 * MCP sign-in's views (docs/mcp.md), shared by the server that answers them and the dashboard that shows them:
 * the consent screen's content, and a grant as Connected apps lists it.
 */
import type { Role } from "../dashboard.js";
import type { KeyScope } from "./key-scopes.js";

export interface ConsentView {
  request_id: string;
  client: { id: string; name: string; kind: "registered" | "document"; redirect_uri: string; redirect_host: string };
  requested_scope: KeyScope | null;
  organizations: {
    id: string;
    name: string;
    role: Role;
    highest_scope: KeyScope;
    projects: { id: string; name: string }[];
  }[];
}

/** What a person allowed an MCP client: one project, one scope, and when it was last used. */
export interface GrantView {
  id: string;
  client_id: string;
  client_name: string;
  user_email: string;
  org_id: string;
  project_id: string;
  project_name: string;
  scope: KeyScope;
  created_at: string;
  last_used_at: string | null;
}
