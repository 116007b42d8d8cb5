import { type IncomingMessage, maxHeaderSize } from "node:http";
import type { Socket } from "node:net";
import fastifyCookie from "@fastify/cookie";
import { AppError } from "@promptstore/core/errors";
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from "fastify";
import secureJsonParse from "secure-json-parse";
import { type Config, configuredContentLimits } from "../config.js";
import { createMcpEndpoints, isClientMistake } from "../mcp/endpoint.js";
import { memoryRateLimiter } from "../ratelimit/flexible.js";
import type { RateLimiter } from "../ratelimit/limiter.js";
import { SecretBox } from "../secrets/secret-box.js";
import { AccountService } from "../service/accounts/account-service.js";
import { InvitationService } from "../service/accounts/invitation-service.js";
import { KeyCache } from "../service/accounts/key-cache.js";
import { TenantService } from "../service/accounts/tenant-service.js";
import { AuditService } from "../service/audit-service.js";
import { DatasetService } from "../service/evaluations/dataset-service.js";
import type { EvaluationService } from "../service/evaluations/evaluation-service.js";
import { datasetsInRequirements } from "../service/evaluations/label-gate.js";
import { ChangeBus } from "../service/events/change-bus.js";
import { EventHub } from "../service/events/event-hub.js";
import { pruneEvents } from "../service/events/event-retention.js";
import type { DocumentFetchOptions } from "../service/oauth/document-fetch.js";
import type { OutcomeService } from "../service/outcomes/outcome-service.js";
import { ConnectionService } from "../service/playground/connection-service.js";
import { ExampleService } from "../service/playground/example-service.js";
import { RunService } from "../service/playground/run-service.js";
import { PromptService } from "../service/prompts/prompt-service.js";
import { AccountStore } from "../store/accounts/accounts.js";
import { InvitationStore } from "../store/accounts/invitations.js";
import { TenantStore } from "../store/accounts/tenants.js";
import { DatasetStore } from "../store/evaluations/datasets.js";
import type { Store } from "../store/index.js";
import { PlaygroundStore } from "../store/playground.js";
import { VERSION } from "../version.js";
import { registerDashboardIncludeRoutes } from "./dashboard/include-routes.js";
import { registerInvitationRoutes } from "./dashboard/invitation-routes.js";
import { registerDashboardPlaygroundRoutes } from "./dashboard/playground-routes.js";
import { projectIdParam, registerDashboardPromptRoutes } from "./dashboard/prompt-routes.js";
import { registerDashboardReleaseRoutes } from "./dashboard/release-routes.js";
import { guardSessionRoutes, userOf } from "./dashboard/session-auth.js";
import { registerSessionRoutes } from "./dashboard/session-routes.js";
import { registerDashboardSettingsRoutes } from "./dashboard/settings-routes.js";
import { SignInThrottle } from "./dashboard/signin-throttle.js";
import { dashboardDirectory, registerDashboardFiles } from "./dashboard/static-files.js";
import { registerErrorHandling, registerMethodNotAllowed } from "./errors.js";
import { registerDashboardDatasetRoutes, registerDatasetEndpoints } from "./evaluations/dataset-routes.js";
import { createEvaluations } from "./evaluations/wiring.js";
import { callerOf } from "./guards/auth.js";
import { connectionTimeouts, limitConnections } from "./guards/connection-limits.js";
import { countRequest } from "./guards/rate-limit.js";
import { guardRoutes } from "./guards/request-guard.js";
import { API_SECURITY_HEADERS, DASHBOARD_SECURITY_HEADERS } from "./guards/security-headers.js";
import { createOAuth, parseOAuthForms } from "./oauth/wiring.js";
import { createOutcomes } from "./outcomes/wiring.js";
import { answerClientError, frameworkErrors, registerRawAnswers, requestIdFor } from "./raw-answers.js";
import { eventReader } from "./reads/event-reads.js";
import { ReadCache } from "./reads/read-cache.js";
import { registerAuditRoutes } from "./routes/audit-v2.js";
import { registerEventRoutes } from "./routes/events.js";
import { registerIncludeRoutes } from "./routes/includes-v2.js";
import { mcpOriginCheck, registerMcpRoute } from "./routes/mcp.js";
import { registerMetaRoutes } from "./routes/meta.js";
import { registerPlanRoutes } from "./routes/plans-v2.js";
import { registerPlaygroundEndpoints } from "./routes/playground.js";
import { registerV1Routes } from "./routes/prompts-v1.js";
import { registerPromptRoutes } from "./routes/prompts-v2.js";
import { registerReleaseRoutes } from "./routes/releases-v2.js";
import { registerSdkRoutes } from "./routes/sdk.js";
import { lazyChildLoggerFactory } from "./telemetry/lazy-logger.js";
import { countRequests, Metrics, registerMetricsRoute } from "./telemetry/metrics.js";
import { logRequests } from "./telemetry/request-log.js";
import { registerWebhooks } from "./webhook-wiring.js";

export interface AppOptions {
  store: Store;
  config: Config;
  logger?: FastifyServerOptions["logger"];
  /** Shared across instances when given (Redis, PostgreSQL); in-process otherwise. Closed with the app. */
  rateLimiter?: RateLimiter;
  /** Given when changes must reach other instances too. */
  bus?: ChangeBus;
  /**
   * Seals the secrets the server reads back (the server's secret key, proven against the store by `serve`).
   * Without it, a key that lives as long as the process: enough for tests, never for a store kept.
   */
  secrets?: SecretBox;
  /** How MCP clients' metadata documents are fetched beyond the configuration (tests: trust anchors, resolver). */
  oauthDocuments?: Partial<DocumentFetchOptions>;
}

export interface App {
  server: FastifyInstance;
  prompts: PromptService;
  audit: AuditService;
  tenants: TenantService;
  accounts: AccountService;
  bus: ChangeBus;
  hub: EventHub;
  secrets: SecretBox;
  /** The playground's model connections and saved examples (docs/playground.md). */
  connections: ConnectionService;
  examples: ExampleService;
  /** Datasets of test cases (docs/evaluations.md). */
  datasets: DatasetService;
  /** Evaluations (docs/evaluations.md). */
  evaluations: EvaluationService;
  /** Production outcomes and the fleet (docs/outcomes.md). */
  outcomes: OutcomeService;
  /** Where the dashboard is served from; undefined when it is not built. */
  dashboardDir: string | undefined;
}

/** Builds the whole HTTP application without listening, so tests drive it through inject(). */
export async function buildApp(options: AppOptions): Promise<App> {
  const { store, config, logger = false } = options;
  const secrets = options.secrets ?? SecretBox.ephemeral();
  const timeouts = connectionTimeouts(config);
  const server = Fastify({
    logger,
    bodyLimit: config.PROMPTSTORE_MAX_BODY_BYTES,
    requestTimeout: timeouts.requestTimeout,
    connectionTimeout: timeouts.connectionTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    // Long ids must reach the route and be a 404 like any unknown prompt, not Fastify's 414: no parameter
    // can be longer than the request head that carries it.
    routerOptions: { maxParamLength: maxHeaderSize },
    // Node would answer a missing Host with a bare 400 of its own; the onRequest hook answers it instead.
    http: { requireHostHeader: false, ...timeouts.http },
    // What Fastify and Node answer before routing is answered in the envelope too (raw-answers.ts).
    frameworkErrors,
    trustProxy: config.PROMPTSTORE_TRUST_PROXY,
    // During shutdown, requests already on open connections are served to the end, not refused.
    return503OnClosing: false,
    childLoggerFactory: lazyChildLoggerFactory,
    genReqId: requestIdFor,
    // One line per request, with the fields request-log.ts chooses, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Fastify calls it with the instance as `this`.
    clientErrorHandler(this: FastifyInstance, error, socket) {
      answerClientError(error, socket, this.log);
    },
  });
  registerRawAnswers(server);
  const bus = options.bus ?? new ChangeBus();
  const prompts = new PromptService(store, bus, {
    guardText: config.PROMPTSTORE_GUARD_TEXT,
    limits: configuredContentLimits(config),
  });
  const tenants = new TenantService(new TenantStore(store.db), bus, async (change) =>
    (await store.channel.announce(store.db, change))?.delivered(),
  );
  // An outage is logged when it starts and when it ends; the requests it fails are not logged one by one.
  const unwatch = store.health.watch({
    down: (fault) =>
      server.log.error(
        { reason: fault.reason, err: fault.cause },
        "database unavailable: requests that need it are answered 503 until it is back",
      ),
    up: (downForMs) => server.log.warn({ downForMs }, "database reachable again"),
  });
  // Changes made by other instances (and by the CLI) reach this one's caches.
  const stopListening = await store.channel.listen(
    (change) => bus.publish(change),
    (error) => server.log.warn({ err: error }, "change channel"),
  );
  const keys = new KeyCache((key) => tenants.findGrant(key), bus, {
    onUse: (keyId, at) => tenants.touchApiKey(keyId, at),
  });
  const cache = config.PROMPTSTORE_READ_CACHE ? new ReadCache(bus) : null;
  const hub = new EventHub(store.events, bus, {
    // The database, not the key cache: a revocation the cache has not heard of must still end streams.
    keyIsValid: async (key) => (await tenants.findGrant(key)) !== undefined,
    heartbeatMs: config.PROMPTSTORE_EVENTS_HEARTBEAT_MS,
    recheckMs: config.PROMPTSTORE_EVENTS_KEY_RECHECK_MS,
    readOf: eventReader(prompts, cache),
  });
  const stopPruning = pruneEvents(store.events, config.PROMPTSTORE_EVENTS_RETENTION_HOURS, (error) =>
    server.log.warn({ err: error }, "event pruning"),
  );
  const sessionTtlMs = config.PROMPTSTORE_SESSION_HOURS * 3_600_000;
  const accounts = new AccountService(new AccountStore(store.db), {
    sessionTtlMs,
    passwordCost: config.PROMPTSTORE_PASSWORD_HASH_COST,
  });
  const audit = new AuditService(store.db);
  const invitations = new InvitationService(new InvitationStore(store.db), accounts, {
    ttlMs: config.PROMPTSTORE_INVITATION_DAYS * 86_400_000,
  });
  const limiter = options.rateLimiter ?? memoryRateLimiter();
  // A client's mistake is answered 4xx and logged at warn, with its request id, by the MCP route; the SDK's
  // own account of it is detail for debugging.
  const mcp = createMcpEndpoints(
    prompts,
    bus,
    (error) =>
      isClientMistake(error)
        ? server.log.debug({ reason: (error as Error).message }, "MCP client mistake")
        : server.log.error({ err: error }, "MCP request failed"),
    {
      // Made below; a tool call comes only once the app is built.
      datasets: () => datasets,
      evaluations: () => {
        if (!evaluations) throw new Error("evaluations are not wired yet");
        return evaluations.service;
      },
    },
  );
  const playground = new PlaygroundStore(store.db);
  const connections = new ConnectionService(playground, secrets, {
    allowPrivate: config.PROMPTSTORE_MODEL_ALLOW_PRIVATE,
  });
  const metrics = config.PROMPTSTORE_METRICS
    ? new Metrics({
        store,
        cache,
        eventStreams: () => hub.size,
        mcpListenStreams: () => mcp.listenStreams(),
        outcomesPending: () => outcomes?.pending ?? 0,
      })
    : undefined;
  const runs = new RunService(
    prompts,
    connections,
    {
      guardText: config.PROMPTSTORE_GUARD_TEXT,
      allowPrivate: config.PROMPTSTORE_MODEL_ALLOW_PRIVATE,
      timeoutMs: config.PROMPTSTORE_MODEL_TIMEOUT_SECONDS * 1000,
      totalTimeoutMs: config.PROMPTSTORE_MODEL_TOTAL_TIMEOUT_SECONDS * 1000,
      maxAnswerBytes: config.PROMPTSTORE_MODEL_MAX_ANSWER_BYTES,
    },
    {
      ran(outcome, ttftMs) {
        metrics?.runs.inc({ outcome });
        if (ttftMs !== null) metrics?.runFirstToken.observe(ttftMs / 1000);
      },
    },
  );
  const examples = new ExampleService(playground, prompts, runs);
  const datasets = new DatasetService(new DatasetStore(store.db, store.operations), {
    maxCases: config.PROMPTSTORE_DATASET_MAX_CASES,
    maxImportBytes: config.PROMPTSTORE_DATASET_MAX_IMPORT_BYTES,
    deletionGuards: [datasetsInRequirements(store.db)],
    examplesOf: (caller, promptId) => examples.list(caller, promptId),
  });
  // Made with the routes below; the metrics read it when scraped.
  let outcomes: OutcomeService | undefined;
  // What builds that died with an earlier process left; in the background, waited for on close.
  let evaluations: ReturnType<typeof createEvaluations> | undefined;
  const swept = datasets.sweepAll().catch((error) => server.log.warn({ err: error }, "dataset sweep"));
  // Node closes idle keep-alive connections once, when close() is called; a connection that was busy then
  // would stay open until its keep-alive timeout and hold the shutdown. While draining, close the idle
  // ones again and again (no per-request cost, unlike a hook on every response).
  // Node 20's closeIdleConnections() skips connections that never carried a request (clients open spare
  // ones), and those would hold the shutdown until their timeout too: they are tracked and closed as well.
  const unused = new Set<Socket>();
  server.server.on("connection", (socket: Socket) => {
    unused.add(socket);
    socket.once("close", () => unused.delete(socket));
  });
  // A listener on the socket's "data" would take parsing off Node's native path; this costs a Set lookup.
  server.server.on("request", (request: IncomingMessage) => unused.delete(request.socket));
  let drain: NodeJS.Timeout | undefined;
  server.addHook("preClose", async () => {
    drain = setInterval(() => {
      server.server.closeIdleConnections();
      for (const socket of unused) socket.destroy();
    }, 50);
    drain.unref();
    // Event streams never end on their own: without this, close() would wait for every client to leave.
    hub.closeAll();
    await mcp.close();
    // Evaluations running here stop and let their leases go: another instance (or the next start) goes on.
    await evaluations?.runner.close();
  });
  server.addHook("onClose", async () => {
    await swept;
    clearInterval(drain);
    metrics?.close();
    stopPruning();
    unwatch();
    await stopListening();
    await limiter.close();
  });

  server.decorateRequest("caller", null);
  // Common headers on every response, failures included; guards are attached per route (request-guard).
  server.addHook("onRequest", (request, reply, done) => {
    const v1 = request.url.startsWith("/api/v1/");
    reply.header("x-request-id", request.id);
    reply.header("cache-control", "no-store");
    reply.header("x-api-version", v1 ? "1" : "2");
    if (v1) reply.header("deprecation", "true");
    // The dashboard (its pages, files and API) gets helmet's headers and its CSP; /api/v1 and /api/v2 are
    // JSON for programs and get the two that matter there.
    if (v1 || request.url.startsWith("/api/v2/")) reply.headers(API_SECURITY_HEADERS);
    else reply.headers(DASHBOARD_SECURITY_HEADERS);
    // HTTP/1.1 requires Host (RFC 9112 3.2); Node's own refusal would be a bare 400 (requireHostHeader is off).
    if (request.headers.host === undefined && request.raw.httpVersion === "1.1") {
      return done(new AppError("bad_request", "host: required in HTTP/1.1"));
    }
    done();
  });
  if (metrics) countRequests(server, metrics);
  logRequests(server);
  limitConnections(server.server, config, () => metrics?.refusedConnections.inc());
  const oauth = createOAuth({
    store,
    config,
    accounts,
    limiter,
    onError: (error) => server.log.warn({ err: error }, "recording an OAuth grant's use"),
    ...(options.oauthDocuments ? { documents: options.oauthDocuments } : {}),
  });
  guardRoutes(server, {
    keys,
    limiter,
    checkOrigin: mcpOriginCheck(config.PROMPTSTORE_MCP_ALLOWED_ORIGINS),
    bearer: oauth.bearer,
  });
  guardSessionRoutes(server, accounts);
  // Cookies are parsed only where a session is read, not on every API request.
  await server.register(fastifyCookie, { hook: false });

  // JSON only: without Fastify's text/plain parser, any other content type is a 415.
  server.removeAllContentTypeParsers();
  server.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, secureJsonParse.parse(text, undefined, { protoAction: "remove", constructorAction: "remove" }));
    } catch {
      done(new AppError("bad_request", "body: is not valid JSON"), undefined);
    }
  });
  parseOAuthForms(server);

  const dashboardDir = dashboardDirectory(config.PROMPTSTORE_DASHBOARD_DIR);
  const appFallback = dashboardDir ? await registerDashboardFiles(server, dashboardDir) : undefined;
  registerErrorHandling(server, appFallback);

  const paths = new Map<string, Set<string>>();
  server.addHook("onRoute", (route) => {
    if (route.url === "*" || route.url === "/*") return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const known = paths.get(route.url) ?? new Set<string>();
    for (const method of methods) known.add(method);
    paths.set(route.url, known);
  });
  registerMetaRoutes(server, store, VERSION);
  registerSdkRoutes(server, undefined, config.PROMPTSTORE_PUBLIC_URL);
  if (metrics) registerMetricsRoute(server, metrics, config.PROMPTSTORE_METRICS_TOKEN);
  registerPromptRoutes(server, prompts, cache, metrics);
  registerPlaygroundEndpoints(server, "/api/v2", { config: { auth: true }, caller: callerOf }, { runs, examples });
  await registerDatasetEndpoints(server, "/api/v2", { config: { auth: true }, caller: callerOf }, datasets);
  registerV1Routes(server, prompts, cache, metrics);
  registerEventRoutes(server, hub, (request) => {
    metrics?.record(request.raw, "GET", "/api/v2/events", 200, 0);
    request.log.info(
      {
        method: "GET",
        path: "/api/v2/events",
        route: "/api/v2/events",
        status: 200,
        project: request.caller?.projectId,
      },
      "event stream ended",
    );
  });
  registerAuditRoutes(server, audit);
  registerReleaseRoutes(server, prompts, examples);
  registerIncludeRoutes(server, prompts);
  registerPlanRoutes(server, prompts, "/api/v2", { config: { auth: true }, caller: callerOf });
  registerPlanRoutes(server, prompts, "/api/dashboard/projects/:projectId", {
    config: { session: true },
    caller: (request) => accounts.projectCaller(userOf(request), projectIdParam(request), "read"),
  });
  registerMcpRoute(server, mcp);
  registerSessionRoutes(server, accounts, new SignInThrottle(limiter), sessionTtlMs);
  registerDashboardPromptRoutes(server, accounts, prompts, metrics?.answersInFlight, examples);
  registerDashboardPlaygroundRoutes(server, { accounts, prompts, connections, runs, examples, limiter });
  registerDashboardReleaseRoutes(server, accounts, prompts);
  registerDashboardIncludeRoutes(server, accounts, prompts);
  await registerDashboardDatasetRoutes(server, accounts, datasets);
  registerDashboardSettingsRoutes(server, accounts, tenants, limiter, audit);
  registerInvitationRoutes(server, accounts, invitations);
  const webhooks = registerWebhooks(server, { store, config, prompts, bus, accounts, secrets });
  evaluations = createEvaluations({
    store,
    config,
    prompts,
    runs,
    connections,
    webhooks,
    datasets,
    metrics,
    log: server.log,
  });
  evaluations.register(server, "/api/v2", { config: { auth: true }, caller: callerOf });
  evaluations.register(server, "/api/dashboard/projects/:projectId", {
    config: { session: true },
    caller: (request) => accounts.projectCaller(userOf(request), projectIdParam(request), "read"),
    // Sessions are not counted by the key guard; an evaluation is, once, like any API request.
    async countRun(request, reply, granted) {
      request.caller = granted;
      await countRequest(request, reply, limiter);
    },
  });
  evaluations.runner.start();
  outcomes = createOutcomes(server, { store, config, prompts, accounts, bus, metrics, log: server.log });
  oauth.register(server);
  registerMethodNotAllowed(server, new Map(paths));

  return {
    server,
    prompts,
    audit,
    tenants,
    accounts,
    bus,
    hub,
    secrets,
    connections,
    examples,
    datasets,
    evaluations: evaluations.service,
    outcomes,
    dashboardDir,
  };
}
