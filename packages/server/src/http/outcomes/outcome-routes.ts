import { outcomesBody, outcomesQuery } from "@promptstore/core/outcomes";
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from "fastify";
import type { Caller } from "../../service/access.js";
import type { OutcomeService } from "../../service/outcomes/outcome-service.js";
import { ok } from "../envelope.js";
import { callerOf } from "../guards/auth.js";
import { promptIdParam } from "../routes/params.js";
import { parseInput } from "../validate.js";

/** Where the reads are served: `/api/v2` with a key, the dashboard's project prefix with a session. */
export interface OutcomeSurface {
  prefix: string;
  config: FastifyContextConfig;
  caller(request: FastifyRequest): Promise<Caller> | Caller;
}

/**
 * `POST /api/v2/outcomes` (docs/outcomes.md): an API key of any scope; a batch counts once against the rate
 * limit, as any request. Applications report, people do not: it has no dashboard twin.
 */
export function registerOutcomeReport(app: FastifyInstance, outcomes: OutcomeService): void {
  app.post("/api/v2/outcomes", { config: { auth: true } }, async (request) => {
    const caller = callerOf(request);
    // A malformed batch is refused whole, naming the field; nothing of it is kept.
    const body = parseInput(outcomesBody, request.body, "body");
    return ok(await outcomes.report(caller, body));
  });
}

/** `GET …/prompts/:id/outcomes` and `GET …/prompts/:id/fleet` under a surface's prefix. */
export function registerOutcomeReads(app: FastifyInstance, outcomes: OutcomeService, surface: OutcomeSurface): void {
  const options = { config: surface.config };

  app.get(`${surface.prefix}/prompts/:id/outcomes`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const query = parseInput(outcomesQuery, request.query, "query");
    return ok(await outcomes.view(caller, id, query));
  });

  app.get(`${surface.prefix}/prompts/:id/fleet`, options, async (request) => {
    const caller = await surface.caller(request);
    return ok(await outcomes.fleet(caller, promptIdParam(request.params)));
  });
}
