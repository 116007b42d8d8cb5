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

  const document = JSON.stringify(buildOpenApiDocument(version));
  app.get("/api/v2/openapi.json", async (_request, reply) => reply.type("application/json").send(document));
}
