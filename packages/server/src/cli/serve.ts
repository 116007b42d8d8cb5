import type { PlanName } from "@promptstore/core/accounts/plans";
import type { Command } from "commander";
import { loadConfig } from "../config.js";
import { buildApp } from "../http/app.js";
import { loggerOptions } from "../http/telemetry/request-log.js";
import { createRateLimiter } from "../ratelimit/across-instances.js";
import { openSecrets } from "../secrets/open-secrets.js";
import { bootstrapIfEmpty } from "../service/accounts/bootstrap.js";
import { sealPlainWebhookSecrets } from "../service/webhooks/webhook-secrets.js";
import { DEFAULT_SQLITE_PATH } from "../store/index.js";
import { emit } from "./output.js";
import { openStoreWhenReachable } from "./wait-for-store.js";

const isLoopback = (host: string) => host === "localhost" || host === "::1" || host.startsWith("127.");

interface ServeOptions {
  port?: string;
  host?: string;
  json?: boolean;
}

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("run the HTTP server (PORT or 3000, HOST or 127.0.0.1, DATABASE_URL)")
    .option("--port <port>", "port to listen on (0 picks a free one)")
    .option("--host <host>", "address to listen on")
    .option("--json", "machine-readable start-up lines")
    .action(async (opts: ServeOptions) => {
      const config = loadConfig({
        ...process.env,
        ...(opts.port !== undefined ? { PORT: opts.port } : {}),
        ...(opts.host !== undefined ? { HOST: opts.host } : {}),
      });
      await serve(config, !!opts.json);
    });
}

/** Listens; a port already taken is said in words, with how to choose another. */
async function listenOrExplain(
  server: { listen(options: { port: number; host: string }): Promise<string>; close(): Promise<unknown> },
  port: number,
  host: string,
  store: { close(): Promise<void> },
): Promise<string> {
  try {
    return await server.listen({ port, host });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    await server.close().catch(() => undefined);
    await store.close();
    throw new Error(
      `port ${port} on ${host} is already in use (EADDRINUSE): stop what listens there, or start on another port with --port N (npm start -- --port ${port + 1}) or PORT=N`,
    );
  }
}

async function serve(config: ReturnType<typeof loadConfig>, json: boolean): Promise<void> {
  logCrashes();
  const store = await openStoreWhenReachable(
    config.DATABASE_URL,
    {
      poolSize: config.DATABASE_POOL_SIZE,
      invalidationTimeoutMs: config.PROMPTSTORE_INVALIDATION_TIMEOUT_MS,
      checkpointOffTheLoop: true,
    },
    config.PROMPTSTORE_DATABASE_WAIT_SECONDS,
    (reason) =>
      emit(
        json,
        { event: "waiting_for_database", reason },
        () => `Waiting up to ${config.PROMPTSTORE_DATABASE_WAIT_SECONDS} s for the database: ${reason}`,
      ),
  );
  const secrets = await openSecrets(config, store, config.DATABASE_URL || DEFAULT_SQLITE_PATH).catch(async (error) => {
    await store.close();
    throw error;
  });
  // Secrets written before they were sealed are sealed now: a migration cannot, as it cannot know the key.
  const sealed = await sealPlainWebhookSecrets(store.db, secrets.box).catch(async (error) => {
    await store.close();
    throw error;
  });
  if (sealed > 0) {
    emit(
      json,
      { event: "webhook_secrets_sealed", count: sealed, key_id: secrets.box.keyId },
      () =>
        `Encrypted ${sealed} webhook signing secret(s) stored in the clear with the secret key (key id ${secrets.box.keyId}).`,
    );
  }
  if (secrets.source === "generated") {
    emit(
      json,
      { event: "secret_key_generated", file: secrets.file, key_id: secrets.box.keyId },
      () =>
        `Generated the server's secret key into ${secrets.file} (mode 0600). Keep it safe and apart from backups: ` +
        "without it, a restored store's webhook and model provider secrets cannot be read.",
    );
  }
  const rateLimiter = await createRateLimiter({ redisUrl: config.REDIS_URL, store, databaseUrl: config.DATABASE_URL });
  const app = await buildApp({
    store,
    config,
    logger: loggerOptions(config.LOG_LEVEL),
    rateLimiter,
    secrets: secrets.box,
  });
  // Installed before listening: a supervisor may signal as soon as the port answers.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.server.log.info({ signal }, "shutting down: finishing in-flight requests");
    // A client that holds a request open past the deadline must not keep the process from stopping.
    const deadline = setTimeout(() => {
      app.server.log.warn("shutdown deadline reached: closing the remaining connections");
      app.server.server.closeAllConnections();
    }, config.PROMPTSTORE_SHUTDOWN_TIMEOUT_MS);
    deadline.unref();
    try {
      await app.server.close();
      await store.close();
    } finally {
      process.exit(0);
    }
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));

  // Listening before the first start's bootstrap: a port in use fails here, before the key and the owner's
  // one-time password are made, which are printed only once and would be lost.
  const address = await listenOrExplain(app.server, config.PORT, config.HOST, store);
  const bootstrap = await bootstrapIfEmpty(app.tenants, app.accounts, {
    plan: config.PROMPTSTORE_DEFAULT_PLAN as PlanName,
    ownerEmail: config.PROMPTSTORE_OWNER_EMAIL,
  });
  const dashboard = app.dashboardDir ? `${address}/` : undefined;
  // Before the listening line, which supervisors (and tests) wait for.
  if (config.PROMPTSTORE_METRICS && !config.PROMPTSTORE_METRICS_TOKEN && !isLoopback(config.HOST)) {
    app.server.log.warn(
      `GET /metrics is open to anyone who can reach ${address}: set PROMPTSTORE_METRICS_TOKEN (docs/operations.md)`,
    );
  }

  if (config.PROMPTSTORE_PASSWORD_HASH_COST !== "standard") {
    app.server.log.warn(
      "PROMPTSTORE_PASSWORD_HASH_COST=test: new passwords are hashed at a cost for test suites, not production",
    );
  }

  if (bootstrap) {
    emit(json, { event: "bootstrap", ...bootstrap }, () =>
      [
        "",
        `Empty database: created organization "${bootstrap.organization.name}" (plan ${bootstrap.organization.plan}) and project "${bootstrap.project.name}".`,
        `Dashboard: ${dashboard ?? "not built (run npm run build)"}`,
        `  sign in as ${bootstrap.owner.email} with the one-time password ${bootstrap.owner.password}`,
        "  (shown once; you choose your own password at first sign-in)",
        `API key (shown once, store it now): ${bootstrap.key.key}`,
        "Try it:",
        `  curl -s -H "x-api-key: ${bootstrap.key.key}" ${address}/api/v2/prompts`,
        "Prompts in git, from your own repository (the promptstore command; PROMPTSTORE_URL, PROMPTSTORE_API_KEY):",
        `  npm install -g ${address}/sdk/promptstore-client.tgz && promptstore pull prompts/`,
        bootstrap.organization.plan === "free"
          ? `The free plan allows 5 prompts per project and 60 requests a minute; lift it with: promptstore org set-plan ${bootstrap.organization.name} unlimited`
          : "",
        "",
      ].join("\n"),
    );
  }
  emit(
    json,
    {
      event: "listening",
      url: address,
      dashboard: dashboard ?? null,
      database: store.dialect,
      rateLimit: rateLimiter.kind,
    },
    () =>
      `Promptstore listening on ${address} (${store.dialect}: ${store.location}; rate limits: ${rateLimiter.kind})` +
      (dashboard ? `; dashboard at ${dashboard}` : "; dashboard not built"),
  );
  if (!bootstrap && !(await app.accounts.store.hasUsers())) {
    app.server.log.warn(
      "no dashboard accounts yet: create one with `promptstore user create <email> --org <org> --role owner`",
    );
  }
}

/**
 * The process's policy stays Node's own (print, then exit): a crash is a bug to find, and a supervisor
 * restarts the process. This only adds a log line in the server's JSON format before it, naming the origin
 * (uncaughtException or unhandledRejection), so that log searches (and the test suite) find every one.
 * Written synchronously: the process is about to end, and stderr is a pipe or a file.
 */
function logCrashes(): void {
  process.on("uncaughtExceptionMonitor", (error, origin) => {
    const line = {
      level: 60,
      time: Date.now(),
      origin,
      err: { type: error?.name, message: error?.message, stack: error?.stack },
      msg: `${origin}: the process exits`,
    };
    process.stderr.write(`${JSON.stringify(line)}\n`);
  });
}
