import { PLAN_NAMES } from "@promptstore/core/accounts/plans";
import { email } from "@promptstore/core/dashboard";
import {
  contentLimits,
  DEFAULT_BODY_BYTES,
  DEFAULT_SECTION_CONTENT_LENGTH,
} from "@promptstore/core/prompts/content-limits";
import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { z } from "zod";
import { DEFAULT_INVALIDATION_TIMEOUT_MS } from "./store/change-channel.js";

const flag = z.enum(["true", "false", "1", "0", "on", "off"]).transform((v) => ["true", "1", "on"].includes(v));

/** Every environment variable the service reads, parsed once at start-up. */
const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATABASE_URL: z.string().min(1).optional(),
  /** Shares the rate limit across instances through Redis; without it, PostgreSQL does (or, on SQLite, the process). */
  REDIS_URL: z.string().min(1).optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  /**
   * How long `serve` waits at start-up for a database it cannot reach yet (starting beside it, restarting),
   * trying again with backoff, before it exits with the reason; 0 exits at once.
   */
  PROMPTSTORE_DATABASE_WAIT_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  PROMPTSTORE_GUARD_TEXT: z.string().min(1).default(DEFAULT_GUARD_TEXT),
  PROMPTSTORE_DEFAULT_PLAN: z.enum(PLAN_NAMES as [string, ...string[]]).default("free"),
  PROMPTSTORE_READ_CACHE: flag.default(true),
  /** Characters one section's content may hold, on every surface (REST, MCP, dashboard, import, git). */
  PROMPTSTORE_MAX_SECTION_CHARS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(100_000_000)
    .default(DEFAULT_SECTION_CONTENT_LENGTH),
  /** Bytes a request body may hold (413 beyond); a version sent as Markdown may hold as many characters. */
  PROMPTSTORE_MAX_BODY_BYTES: z.coerce.number().int().min(65_536).max(1_073_741_824).default(DEFAULT_BODY_BYTES),
  PROMPTSTORE_TRUST_PROXY: flag.default(false),
  /**
   * On PostgreSQL, how long a write waits, after commit, for every other instance to drop what it made
   * stale before answering anyway (with a warning); 0 answers at once.
   */
  PROMPTSTORE_INVALIDATION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(DEFAULT_INVALIDATION_TIMEOUT_MS),
  /** Time a client has to send a request's complete head (request line and headers); 408 after it. */
  PROMPTSTORE_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** Time a client has to send a whole request, head and body; 408 after it. Responses are not limited. */
  PROMPTSTORE_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /**
   * A connection on which nothing moves for this long is closed (a client that connects and says nothing,
   * a body that stops). Event streams and MCP listen streams are exempt: their heartbeats prove them alive.
   */
  PROMPTSTORE_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** How long a keep-alive connection waits for its next request; above a load balancer's idle timeout. */
  PROMPTSTORE_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** Open connections the server accepts in all; beyond it, new ones are closed at once. */
  PROMPTSTORE_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /**
   * Open connections one client address may hold (0: no limit). Unset: 256, or no limit with
   * PROMPTSTORE_TRUST_PROXY on, where every connection comes from the proxy.
   */
  PROMPTSTORE_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(0).max(1_000_000).optional(),
  /** Serves GET /metrics (Prometheus) and counts every request for it; off: no route, no per-request cost. */
  PROMPTSTORE_METRICS: flag.default(true),
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  PROMPTSTORE_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /** How long SIGTERM waits for requests in flight before closing their connections. */
  PROMPTSTORE_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /** How long a dashboard session lasts after sign-in. */
  PROMPTSTORE_SESSION_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 365)
    .default(168),
  /** How long an invitation to an organization can be accepted. */
  PROMPTSTORE_INVITATION_DAYS: z.coerce.number().min(0.001).max(365).default(7),
  /** How often an idle event stream carries a comment line, so proxies do not close it. */
  PROMPTSTORE_EVENTS_HEARTBEAT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /** How often open event streams check that their key still works (a CLI revocation on SQLite notifies no one). */
  PROMPTSTORE_EVENTS_KEY_RECHECK_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** How long change events are kept for reconnecting streams; older ones get a `reset`. */
  PROMPTSTORE_EVENTS_RETENTION_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 365)
    .default(24),
  /**
   * How long production outcomes are kept (docs/outcomes.md): their aggregates, by the minute for a day and
   * by the hour after; older ones are deleted, and outcomes reported with an older time are refused.
   */
  PROMPTSTORE_OUTCOME_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * Test only: the length of the "minute" an outcome row spans, in ms (a divisor of 60 000). Compresses a
   * rollout plan's time in tests by configuration (docs/rollouts.md "Plans"); production keeps 60 000.
   */
  PROMPTSTORE_OUTCOME_MINUTE_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(60_000)
    .refine((ms) => 60_000 % ms === 0, "must divide 60000")
    .default(60_000),
  /** How often each instance's plan runner looks at the running rollout plans (docs/rollouts.md "Plans"). */
  PROMPTSTORE_ROLLOUT_TICK_MS: z.coerce.number().int().min(10).max(3_600_000).default(5000),
  /** Webhook endpoints may be on private, loopback, link-local and unique-local addresses (off: refused). */
  PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: flag.default(false),
  /**
   * Model connections may be on private, loopback, link-local and unique-local addresses (a local Ollama,
   * vLLM or LM Studio); off: refused, as webhooks are. Its own setting: allowing a local model must not
   * also let webhooks reach the internal network.
   */
  PROMPTSTORE_MODEL_ALLOW_PRIVATE: flag.default(false),
  /** A model call with no answer head, or no byte on its stream, for this long ends as provider_timeout. */
  PROMPTSTORE_MODEL_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /**
   * How long an evaluation's lease on its instance lasts unless renewed (every second while it runs): how long
   * an evaluation whose instance died waits before another instance goes on with it (docs/evaluations.md).
   */
  PROMPTSTORE_EVALUATION_LEASE_SECONDS: z.coerce.number().int().min(2).max(3600).default(30),
  /** Evaluations one instance runs at once; more wait, in the store, for a place on any instance. */
  PROMPTSTORE_EVALUATION_MAX_RUNNING: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * Model calls of all one instance's evaluations at once, whatever their own concurrency: each answer may
   * hold up to PROMPTSTORE_MODEL_MAX_ANSWER_BYTES while it streams, so this bounds their memory.
   */
  PROMPTSTORE_EVALUATION_MAX_CALLS: z.coerce.number().int().min(1).max(1024).default(32),
  /** The whole of one model call, however lively its stream; ends as provider_timeout. */
  PROMPTSTORE_MODEL_TOTAL_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  /**
   * The most of one model answer the server keeps: its content and its tool calls' arguments, in UTF-8 bytes
   * (1 MiB, about 250 000 tokens). More ends the call as provider_answer_too_large.
   */
  PROMPTSTORE_MODEL_MAX_ANSWER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(1024 * 1024),
  /** Time limit of one webhook attempt, from connecting to the end of the (partly read) answer. */
  PROMPTSTORE_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /**
   * What hashing a new password costs: `standard` (scrypt N=2^15, r=8, p=3, OWASP's row) or `test` (N=2^10,
   * r=8, p=1), for test suites only, which otherwise spend most of their time hashing; the server warns at
   * start. Each hash keeps its own parameters, so either verifies the other's.
   */
  PROMPTSTORE_PASSWORD_HASH_COST: z.enum(["standard", "test"]).default("standard"),
  /** Multiplies the webhook retry waits and the 24-hour retry window; below 1 only to test retries quickly. */
  PROMPTSTORE_WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1),
  /**
   * The server's secret key (32 bytes, hex or base64): encrypts webhook signing secrets and model providers'
   * API keys at rest. Required on PostgreSQL; on SQLite, generated on first start into the key file.
   */
  PROMPTSTORE_SECRET_KEY: z.string().min(1).optional(),
  /** Where the key is read from when PROMPTSTORE_SECRET_KEY is unset; on SQLite, `<database>.key` by default. */
  PROMPTSTORE_SECRET_KEY_FILE: z.string().min(1).optional(),
  /** Earlier secret keys, comma-separated: they still open what they sealed while the key changes. */
  PROMPTSTORE_SECRET_KEY_PREVIOUS: z
    .string()
    .transform((v) =>
      v
        .split(",")
        .map((k) => k.trim())
        .filter(Boolean),
    )
    .optional(),
  /** The e-mail of the owner account created on an empty database. */
  PROMPTSTORE_OWNER_EMAIL: email.default("owner@promptstore.local"),
  /** Where the built dashboard is; the @promptstore/dashboard package's dist/ when unset. */
  PROMPTSTORE_DASHBOARD_DIR: z.string().min(1).optional(),
  /**
   * The server's public base URL (`https://prompts.example.com`), where clients reach it: the OAuth issuer, the
   * MCP resource and the install commands of /sdk/ are built from it. Unset: from each request's own scheme and host.
   */
  PROMPTSTORE_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: "must be an http or https URL" })
    .transform((v) => v.replace(/\/+$/, ""))
    .optional(),
  /** How long an MCP client's OAuth access token lasts; its refresh token lasts 30 days and is rotated. */
  PROMPTSTORE_OAUTH_ACCESS_TOKEN_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
  /** The most cases one dataset version may hold (docs/evaluations.md, "Datasets"). */
  PROMPTSTORE_DATASET_MAX_CASES: z.coerce.number().int().min(1).max(10_000_000).default(100_000),
  /**
   * Bytes one dataset import (a JSONL or CSV file streamed to the server) may hold: its own bound, not
   * PROMPTSTORE_MAX_BODY_BYTES, since an import is read line by line and never held whole.
   */
  PROMPTSTORE_DATASET_MAX_IMPORT_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .max(64 * 1024 ** 3)
    .default(1024 ** 3),
  /** Hostnames a browser Origin may name on the MCP endpoint; localhost-class when unset. */
  PROMPTSTORE_MCP_ALLOWED_ORIGINS: z
    .string()
    .transform((v) =>
      v
        .split(",")
        .map((h) => h.trim())
        .filter(Boolean),
    )
    .optional(),
});

export type Config = z.infer<typeof envSchema>;

/** The name of every variable the schema reads (docs/configuration.md lists each; a test checks it). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as (keyof Config)[];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`configuration: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data;
}

/** The lengths written text may have, from the configuration: what the service checks every write against. */
export function configuredContentLimits(config: Config) {
  return contentLimits(config.PROMPTSTORE_MAX_SECTION_CHARS, config.PROMPTSTORE_MAX_BODY_BYTES);
}

/** The configuration with defaults only, plus overrides: what tests start from. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), ...overrides };
}
