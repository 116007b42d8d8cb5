import type { Role } from "@promptstore/core/dashboard";

/** What each role may do, in a few words: shown beside every role picker. */
export const ROLE_HELP: Record<Role, string> = {
  owner: "everything, including keys, members and projects",
  editor: "create, edit and publish prompts",
  viewer: "read prompts",
};
