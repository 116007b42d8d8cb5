/**
 * The dashboard API (`/api/dashboard/…`): its input schemas, used by the server to validate and by the
 * dashboard's forms, and the shapes it answers with. Prompt bodies (create, save, publish) are the REST
 * schemas of `schemas.ts`; only what is the dashboard's own lives here.
 */
import { z } from "zod";
import { type KeyScope, keyScopeSchema } from "./accounts/key-scopes.js";
import { text } from "./text.js";
import type { PromptListItem } from "./views.js";

export const ROLES = ["owner", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 200;

export const email = text()
  .trim()
  .max(254, "must be at most 254 characters")
  .pipe(z.email("must be an e-mail address"))
  .transform((e) => e.toLowerCase());

export const newPassword = text()
  .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`);

/** A password as typed at sign-in: not checked against the rules of today, only bounded. */
const givenPassword = text()
  .min(1, "must not be empty")
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`);

export const role = z.enum(ROLES, { error: "must be owner, editor or viewer" });

export const signInBody = z.strictObject({ email, password: givenPassword });
/** `current_password` may be left out only while the account holds a one-time password (the server checks). */
export const changePasswordBody = z.strictObject({
  current_password: givenPassword.optional(),
  new_password: newPassword,
});
export const createProjectBody = z.strictObject({
  name: text().trim().min(1, "must not be empty").max(200, "must be at most 200 characters"),
});
export const addMemberBody = z.strictObject({ email, role });
/** An owner invites an e-mail address into an organization with a role (the old "add member" body too). */
export const inviteBody = addMemberBody;
/** The invitation link's token: 43 base64url characters (32 random bytes). */
export const invitationToken = text()
  .max(100, "must be at most 100 characters")
  .regex(/^[A-Za-z0-9_-]{43}$/, "is not an invitation token");
export const invitationTokenBody = z.strictObject({ token: invitationToken });
/** Creating one's account through an invitation: the e-mail is the invitation's, the password the invitee's. */
export const invitationAccountBody = z.strictObject({ token: invitationToken, password: newPassword });
export const changeRoleBody = z.strictObject({ role });
/** A key's scope is chosen when it is created; without one it gets the default (publish). */
export const createKeyBody = z.strictObject({ scope: keyScopeSchema.optional() }).optional();

export type SignInBody = z.infer<typeof signInBody>;
export type ChangePasswordBody = z.infer<typeof changePasswordBody>;
export type CreateProjectBody = z.infer<typeof createProjectBody>;
export type AddMemberBody = z.infer<typeof addMemberBody>;

export interface SessionUser {
  id: string;
  email: string;
  /** True after a generated (one-time) password: the dashboard asks for a new one before anything else. */
  must_change_password: boolean;
}

export interface ProjectSummary {
  id: string;
  name: string;
  created_at: string;
}

export interface Membership {
  org: { id: string; name: string; plan: string };
  role: Role;
  projects: ProjectSummary[];
}

/** GET/POST /api/dashboard/session. `csrf_token` goes in the `x-csrf-token` header of every mutation. */
export interface SessionView {
  user: SessionUser;
  csrf_token: string;
  memberships: Membership[];
}

/** A prompt in the dashboard's list: the REST list item, its variables, and when its pointers' versions were saved. */
export interface DashboardPromptItem extends PromptListItem {
  variables: string[];
  production_saved_at: string | null;
  latest_saved_at: string;
}

export interface DashboardPromptList {
  project: { id: string; name: string };
  /** The caller's role in the project's organization. */
  role: Role;
  prompts: DashboardPromptItem[];
}

/** A page of the dashboard's list holds at most this many prompts. */
export const PROMPT_PAGE_MAX = 100;
/** The longest search of the dashboard's list, in characters. */
export const PROMPT_SEARCH_MAX = 200;

const pageNumber = (what: string, max: number) =>
  z.coerce
    .number({ error: `must be a whole number from 1 to ${max}` })
    .int(`must be a whole number from 1 to ${max}`)
    .min(1, `must be a whole number from 1 to ${max}`)
    .max(max, `must be a whole number from 1 to ${max}`)
    .optional()
    .describe(what);

/**
 * The dashboard's list, one page at a time, optionally searched (`GET …/prompts?q=&page=&per_page=`): what a
 * project of 100 000 prompts needs, where the whole list is 40 MB. Without any of them the whole list is sent.
 */
export const promptPageQuery = z.object({
  q: text().max(PROMPT_SEARCH_MAX, `must be at most ${PROMPT_SEARCH_MAX} characters`).optional(),
  page: pageNumber("Page number, from 1", 1_000_000),
  per_page: pageNumber(`Prompts per page, 1-${PROMPT_PAGE_MAX}`, PROMPT_PAGE_MAX),
});
export type PromptPageQuery = z.infer<typeof promptPageQuery>;

/** One page of the dashboard's list: the prompts of `page` among those `q` matches, oldest first. */
export interface DashboardPromptPage extends DashboardPromptList {
  /** What was searched for, trimmed; "" for every prompt. */
  q: string;
  page: number;
  per_page: number;
  /** How many prompts `q` matches (the project's count when it is ""). */
  matching: number;
  /** How many prompts the project has. */
  total: number;
  /** The label names in use on any prompt of the project, production left out, in the screens' order. */
  labels: string[];
}

/** Name and id, case-insensitively: what a person remembers of a prompt. The one rule of the list's search. */
export function matchesSearch(prompt: { id: string; name: string }, query: string): boolean {
  const q = query.trim().toLowerCase();
  return q === "" || prompt.name.toLowerCase().includes(q) || prompt.id.toLowerCase().includes(q);
}

export interface ApiKeyView {
  id: string;
  prefix: string;
  scope: KeyScope;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface MemberView {
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
}

export type InvitationStatus = "pending" | "accepted" | "revoked" | "expired";

/** An invitation as the members screen, the CLI and the API list it: never with its token. */
export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  /** `user:<e-mail>` or `cli`. */
  invited_by: string;
  created_at: string;
  expires_at: string;
  status: InvitationStatus;
  accepted_at: string | null;
  revoked_at: string | null;
}

/**
 * POST …/invitations (and the old POST …/members): the same answer whether or not the e-mail has an account.
 * `token` and `link` (the dashboard path to open, `/invite#<token>`) are shown this once.
 */
export interface CreatedInvitation extends InvitationView {
  token: string;
  link: string;
}

/** What the invitation's page shows its holder before they accept. */
export interface InvitationPreview {
  org: { name: string };
  email: string;
  role: Role;
  expires_at: string;
}

export interface UsageView {
  org: { id: string; name: string; plan: string };
  limits: { prompts_per_project: number | null; requests_per_minute: number | null };
  /** This minute's requests of the organization (all its keys); null when the plan has no rate limit. */
  rate: { limit: number; used: number; remaining: number; reset_seconds: number } | null;
  projects: { id: string; name: string; prompt_count: number }[];
}
