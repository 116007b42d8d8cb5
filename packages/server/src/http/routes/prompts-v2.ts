import { ASSIGN_MAX_LENGTH, isLabelRef } from "@promptstore/core/labels";
import {
  createPromptBody,
  importPromptBody,
  listQuery,
  publishBody,
  READ_REF_PATTERN,
  readDefaults,
  readOptionsOf,
  readQuery,
  saveVersionBody,
} from "@promptstore/core/schemas";
import { isFullHash } from "@promptstore/core/version-ref";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { ok } from "../envelope.js";
import { callerOf } from "../guards/auth.js";
import { sendCachedRead } from "../reads/cached-read.js";
import { envelopeAround, sendPagesAsJson } from "../reads/chunked-json.js";
import { PRODUCTION_READ, type ReadCache } from "../reads/read-cache.js";
import { v2ReadJson } from "../reads/read-json.js";
import type { Metrics, ReadKind } from "../telemetry/metrics.js";
import { parseInput } from "../validate.js";
import { labelParam, promptIdParam } from "./params.js";

/** What resolved a read, as the metrics count it: a pointer, the label's name, or `version` (a hash). */
/** What resolved a read, as /metrics counts it: never a label's own name, which is a tenant's word. */
const readKind = (version: string): ReadKind =>
  version === "latest" || version === "production" ? version : isLabelRef(version) ? "label" : "version";

/** What the schema would accept anyway, checked without it: printable ASCII within the limits. */
const PLAIN_ASSIGN = new RegExp(`^[\\x20-\\x7e]{0,${ASSIGN_MAX_LENGTH}}$`);

/**
 * A read's query as the schema would give it, for the common shapes (`version`, `guard`, `assign` of plain
 * ASCII), checked by two patterns instead of the schema: a labelled or rollout read pays a few
 * microseconds less, which is a tenth of a cached read. Anything else goes to the schema, whose messages
 * name what is wrong.
 */
function plainReadQuery(raw: Record<string, unknown>): z.output<typeof readQuery> | undefined {
  for (const key in raw) if (key !== "version" && key !== "guard" && key !== "assign") return undefined;
  const { version, guard, assign } = raw;
  if (version !== undefined && (typeof version !== "string" || !READ_REF_PATTERN.test(version))) return undefined;
  if (guard !== undefined && guard !== "true" && guard !== "false") return undefined;
  if (assign !== undefined && (typeof assign !== "string" || !PLAIN_ASSIGN.test(assign))) return undefined;
  return raw as z.output<typeof readQuery>;
}

function hasKeys(object: Record<string, unknown>): boolean {
  for (const _ in object) return true;
  return false;
}

export function registerPromptRoutes(
  app: FastifyInstance,
  service: PromptService,
  cache: ReadCache | null,
  metrics?: Metrics,
): void {
  const auth = { config: { auth: true } };

  app.get("/api/v2/prompts", auth, async (request, reply) => {
    const query = parseInput(listQuery, request.query, "query");
    const caller = callerOf(request);
    if (query.limit !== undefined || query.cursor !== undefined) return ok(await service.list(caller, query));
    // Unpaged: every prompt, streamed page by page (chunked-json.ts), in the bytes of the one-piece answer.
    const [head, tail] = envelopeAround({ project: { id: caller.projectId, name: caller.projectName }, prompts: [] });
    return sendPagesAsJson(reply, head, service.listPages(caller), tail, metrics?.answersInFlight);
  });

  // Not async: a cache hit is answered without a promise.
  app.get("/api/v2/prompts/:id", auth, (request, reply) => {
    const id = promptIdParam(request.params);
    // Most reads carry no query at all; they skip the schema.
    const raw = request.query as Record<string, unknown>;
    const query = hasKeys(raw) ? (plainReadQuery(raw) ?? parseInput(readQuery, raw, "query")) : {};
    const caller = callerOf(request);
    const options = readOptionsOf(query);
    const { version, guard } = readDefaults(options);
    // The usual read (production, guarded) names its variant with a constant: no string built per request.
    const usual = version === "production" && guard;
    // A version named by its full hash never changes, so clients may keep it for good; `production`,
    // `latest` and prefixes can move and carry no tag. g1/g0: with or without the guard.
    const etag = !usual && isFullHash(version) ? `"${version}.${guard ? "g1" : "g0"}"` : undefined;
    return sendCachedRead(
      request,
      reply,
      cache,
      caller,
      id,
      usual ? PRODUCTION_READ : `v2|${version}|${guard}`,
      {
        resolve: () => service.resolveRead(caller, id, { version, guard }),
        render: v2ReadJson,
        assign: options.assign,
        served: metrics && ((arm) => metrics.countRead(readKind(version), arm)),
      },
      etag,
    );
  });

  app.get("/api/v2/prompts/:id/versions", auth, async (request) => {
    return ok(await service.listVersions(callerOf(request), promptIdParam(request.params)));
  });

  app.post("/api/v2/prompts", auth, async (request, reply) => {
    const body = parseInput(createPromptBody, request.body, "body");
    reply.code(201);
    return ok(await service.create(callerOf(request), body));
  });

  app.put("/api/v2/prompts/:id", auth, async (request) => {
    const id = promptIdParam(request.params);
    const body = parseInput(saveVersionBody, request.body, "body");
    return ok(await service.save(callerOf(request), id, body));
  });

  app.delete("/api/v2/prompts/:id", auth, async (request) => {
    return ok(await service.delete(callerOf(request), promptIdParam(request.params)));
  });

  app.post("/api/v2/prompts/:id/publish", auth, async (request) => {
    const id = promptIdParam(request.params);
    const body = parseInput(publishBody, request.body ?? {}, "body");
    return ok(
      await service.publish(callerOf(request), id, body.version ?? "latest", {
        label: body.label,
        percent: body.percent,
      }),
    );
  });

  app.delete("/api/v2/prompts/:id/labels/:label", auth, async (request) => {
    const id = promptIdParam(request.params);
    return ok(await service.removeLabel(callerOf(request), id, labelParam(request.params)));
  });

  app.post("/api/v2/import", auth, async (request) => {
    const body = parseInput(importPromptBody, request.body, "body");
    return ok(await service.importPrompt(callerOf(request), body));
  });
}
