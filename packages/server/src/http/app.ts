import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import secureJsonParse from "secure-json-parse";
import type { Config } from "../config.js";
import { AppError } from "../core/errors.js";
import { LIMITS } from "../core/schemas.js";
import { PromptService } from "../service/prompt-service.js";
import type { Store } from "../store/index.js";
import { TenantStore } from "../store/tenants.js";
import { VERSION } from "../version.js";
import { registerAuth } from "./auth.js";
import { registerErrorHandling, registerMethodNotAllowed } from "./errors.js";
import { registerMetaRoutes } from "./routes/meta.js";
import { registerPromptRoutes } from "./routes/prompts-v2.js";

export interface AppOptions {
  store: Store;
  config: Config;
  logger?: FastifyServerOptions["logger"];
}

export interface App {
  server: FastifyInstance;
  service: PromptService;
  tenants: TenantStore;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the whole HTTP application without listening, so tests drive it through inject(). */
export async function buildApp({ store, config, logger = false }: AppOptions): Promise<App> {
  const server = Fastify({
    logger,
    bodyLimit: LIMITS.bodyBytes,
    // Long ids must reach the route and be a 404 like any unknown prompt, not Fastify's 414.
    maxParamLength: 1024,
    trustProxy: config.PROMPTSTORE_TRUST_PROXY,
    return503OnClosing: true,
    // A caller's request id is kept when it is safe to log, so traces join up across services.
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  const service = new PromptService(store, { guardText: config.PROMPTSTORE_GUARD_TEXT });
  const tenants = new TenantStore(store.db);

  server.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    reply.header("cache-control", "no-store");
    reply.header("x-api-version", request.url.startsWith("/api/v1/") ? "1" : "2");
  });

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

  registerErrorHandling(server);
  registerAuth(server, (key) => tenants.findGrant(key));

  const paths = new Map<string, Set<string>>();
  server.addHook("onRoute", (route) => {
    if (route.url === "*" || route.url === "/*") return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const known = paths.get(route.url) ?? new Set<string>();
    for (const method of methods) known.add(method);
    paths.set(route.url, known);
  });
  registerMetaRoutes(server, store, VERSION);
  registerPromptRoutes(server, service);
  registerMethodNotAllowed(server, new Map(paths));

  return { server, service, tenants };
}
