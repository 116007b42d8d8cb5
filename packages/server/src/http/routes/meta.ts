import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import { DatabaseUnavailable, faultOf } from "../../store/faults.js";
import type { Store } from "../../store/index.js";
import { ok } from "../envelope.js";
import { buildOpenApiDocument } from "../openapi/openapi.js";

/** Routes without a key: health for load balancers, and the API description. */
export function registerMetaRoutes(app: FastifyInstance, store: Store, version: string): void {
  app.get("/healthz", async () => {
    try {
      await sql`select 1`.execute(store.db);
    } catch (error) {
      // Not logged per request: the store's health logs the outage once.
      throw new DatabaseUnavailable("database unreachable", faultOf(error)?.reason ?? "connection", error);
    }
    return ok({ status: "ok", database: store.dialect });
  });

  app.get("/api/v2/openapi.json", async (_request, reply) =>
    reply.type("application/json").send(openApiDocument(version)),
  );
}

const documents = new Map<string, string>();

/**
 * The API description, made on its first request and kept: it depends on the version alone, and making it
 * (every schema converted to JSON Schema) was 60% of building the app, for every server start and every test.
 */
function openApiDocument(version: string): string {
  let document = documents.get(version);
  if (document === undefined) {
    document = JSON.stringify(buildOpenApiDocument(version));
    documents.set(version, document);
  }
  return document;
}
