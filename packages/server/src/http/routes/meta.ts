import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import type { Store } from "../../store/index.js";
import { ok } from "../envelope.js";
import { buildOpenApiDocument } from "../openapi.js";

/** Routes without a key: health for load balancers, and the API description. */
export function registerMetaRoutes(app: FastifyInstance, store: Store, version: string): void {
  app.get("/healthz", async () => {
    try {
      await sql`select 1`.execute(store.db);
    } catch {
      throw new AppError("unavailable", "database unreachable");
    }
    return ok({ status: "ok", database: store.dialect });
  });

  const document = JSON.stringify(buildOpenApiDocument(version));
  app.get("/api/v2/openapi.json", async (_request, reply) => reply.type("application/json").send(document));
}
