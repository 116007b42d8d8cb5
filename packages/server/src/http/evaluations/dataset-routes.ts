import { Readable } from "node:stream";
import { AppError } from "@promptstore/core/errors";
import {
  appendCasesBody,
  createDatasetBody,
  DATASET_IMPORT_TYPES,
  datasetCasesQuery,
  datasetCreateImportQuery,
  datasetExportQuery,
  datasetImportQuery,
  datasetReadQuery,
  replaceCasesBody,
  updateDatasetBody,
} from "@promptstore/core/evaluations/dataset-api";
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "../../service/access.js";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { ImportFormat } from "../../service/evaluations/dataset-files.js";
import type { DatasetService } from "../../service/evaluations/dataset-service.js";
import { projectIdParam } from "../dashboard/prompt-routes.js";
import { userOf } from "../dashboard/session-auth.js";
import { ok } from "../envelope.js";
import { parseInput } from "../validate.js";

export interface DatasetSurface {
  /** The route's guard: `{ auth: true }` (an API key) or `{ session: true }` (the dashboard). */
  config: FastifyContextConfig;
  caller(request: FastifyRequest): Promise<Caller> | Caller;
}

const idParam = (request: FastifyRequest): string => String((request.params as { id?: string }).id ?? "");

const FORMATS: Record<(typeof DATASET_IMPORT_TYPES)[number], ImportFormat> = {
  "application/x-ndjson": "jsonl",
  "application/jsonl": "jsonl",
  "text/csv": "csv",
};

/** The file's format from its Content-Type (parameters such as charset aside: it is read as UTF-8). */
function importFormat(request: FastifyRequest): ImportFormat {
  const type = String(request.headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase();
  const format = FORMATS[type as keyof typeof FORMATS];
  if (format === undefined) {
    throw new AppError("unsupported_media_type", `content-type: must be ${DATASET_IMPORT_TYPES.join(", ")}`);
  }
  return format;
}

/**
 * The request's body as it arrives. Stopping early (a bad line) must not destroy the request, which would
 * take the socket and the refusal with it (`imported` answers it, and closes the connection after).
 */
function bodyOf(request: FastifyRequest): AsyncIterable<Buffer> {
  return request.raw.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>;
}

/** A refusal before the whole file arrived closes the connection: nobody wants the rest of the file read. */
async function imported<T>(request: FastifyRequest, reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!request.raw.complete) reply.header("connection", "close");
    throw error;
  }
}

/**
 * Datasets (docs/evaluations.md, "Datasets") under `prefix`: `/api/v2` for keys, the dashboard's project
 * prefix for sessions. Same service, same schemas; the service decides permissions. The imports read the
 * request's body as a stream (JSONL or CSV), in a context of their own whose content-type parsers hand the
 * body over unread; every other route keeps the JSON-only parser (415 for anything else).
 */
export async function registerDatasetEndpoints(
  app: FastifyInstance,
  prefix: string,
  surface: DatasetSurface,
  datasets: DatasetService,
): Promise<void> {
  const options = { config: surface.config };
  const base = `${prefix}/datasets`;

  app.get(base, options, async (request) => ok(await datasets.list(await surface.caller(request))));

  app.post(base, options, async (request, reply) => {
    const caller = await surface.caller(request);
    const body = parseInput(createDatasetBody, request.body, "body");
    const created = await datasets.create(caller, body);
    reply.code(201);
    return ok(created);
  });

  app.get(`${base}/:id`, options, async (request) => {
    const caller = await surface.caller(request);
    const query = parseInput(datasetReadQuery, request.query, "query");
    return ok(await datasets.get(caller, idParam(request), query.version));
  });

  app.put(`${base}/:id`, options, async (request) => {
    const caller = await surface.caller(request);
    const body = parseInput(replaceCasesBody, request.body, "body");
    return ok(await datasets.replace(caller, idParam(request), body));
  });

  app.patch(`${base}/:id`, options, async (request) => {
    const caller = await surface.caller(request);
    const body = parseInput(updateDatasetBody, request.body, "body");
    return ok(await datasets.update(caller, idParam(request), body));
  });

  app.delete(`${base}/:id`, options, async (request) => {
    return ok(await datasets.remove(await surface.caller(request), idParam(request)));
  });

  app.get(`${base}/:id/versions`, options, async (request) => {
    return ok(await datasets.versions(await surface.caller(request), idParam(request)));
  });

  app.get(`${base}/:id/cases`, options, async (request) => {
    const caller = await surface.caller(request);
    const query = parseInput(datasetCasesQuery, request.query, "query");
    return ok(await datasets.cases(caller, idParam(request), query));
  });

  app.post(`${base}/:id/cases`, options, async (request) => {
    const caller = await surface.caller(request);
    const body = parseInput(appendCasesBody, request.body, "body");
    return ok(await datasets.append(caller, idParam(request), body));
  });

  app.get(`${base}/:id/export`, options, async (request, reply) => {
    const caller = await surface.caller(request);
    const query = parseInput(datasetExportQuery, request.query, "query");
    const exported = await datasets.exportLines(caller, idParam(request), query.version);
    reply.type("application/x-ndjson");
    reply.header("x-dataset-version", exported.version);
    reply.header("x-dataset-cases", String(exported.cases));
    // Readable.from pulls the next page only when the socket has taken the last: back-pressure end to end.
    return reply.send(Readable.from(exported.lines, { objectMode: false }));
  });

  await app.register(async (files) => {
    // Every body reaches the import routes unread; the route decides by Content-Type (415 for the others).
    files.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
    for (const type of DATASET_IMPORT_TYPES) {
      files.addContentTypeParser(type, (_request, payload, done) => done(null, payload));
    }

    files.post(`${base}/import`, options, async (request, reply) => {
      const caller = await surface.caller(request);
      const query = parseInput(datasetCreateImportQuery, request.query, "query");
      const format = importFormat(request);
      const created = await imported(request, reply, () =>
        datasets.createFromFile(caller, query, { format, source: bodyOf(request) }),
      );
      reply.code(201);
      return ok(created);
    });

    files.post(`${base}/:id/import`, options, async (request, reply) => {
      const caller = await surface.caller(request);
      const query = parseInput(datasetImportQuery, request.query, "query");
      const format = importFormat(request);
      return ok(
        await imported(request, reply, () =>
          datasets.importInto(caller, idParam(request), { format, source: bodyOf(request) }, query),
        ),
      );
    });
  });
}

/** The same routes for the dashboard, under the project's prefix, through a session. */
export async function registerDashboardDatasetRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  datasets: DatasetService,
): Promise<void> {
  await registerDatasetEndpoints(
    app,
    "/api/dashboard/projects/:projectId",
    {
      config: { session: true },
      caller: (request) => accounts.projectCaller(userOf(request), projectIdParam(request), "read"),
    },
    datasets,
  );
}
