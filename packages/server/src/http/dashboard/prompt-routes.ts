import type { Permission } from "@promptstore/core/accounts/permissions";
import {
  type DashboardPromptList,
  type DashboardPromptPage,
  PROMPT_PAGE_MAX,
  promptPageQuery,
} from "@promptstore/core/dashboard";
import { createPromptBody, publishBody, readOptionsOf, readQuery, saveVersionBody } from "@promptstore/core/schemas";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { ExampleService } from "../../service/playground/example-service.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { untilClientGoes } from "../client-gone.js";
import { ok } from "../envelope.js";
import { type AnswersInFlight, envelopeAround, sendPagesAsJson } from "../reads/chunked-json.js";
import { labelParam, promptIdParam, storableIdParam } from "../routes/params.js";
import { parseInput } from "../validate.js";
import { userOf } from "./session-auth.js";

const PREFIX = "/api/dashboard/projects/:projectId";

export const projectIdParam = (request: FastifyRequest): string =>
  storableIdParam(request.params, "projectId", "project");

/**
 * The prompt screens' API: the same PromptService and the same schemas as REST, reached through a
 * session. The account service turns (user, project, what is asked) into a caller or a refusal.
 */
export function registerDashboardPromptRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  prompts: PromptService,
  inFlight?: AnswersInFlight,
  examples?: ExampleService,
): void {
  const session = { config: { session: true } };
  const callerFor = (request: FastifyRequest, needed: Permission) =>
    accounts.projectCaller(userOf(request), projectIdParam(request), needed);

  // With q, page or per_page: one page of the list, searched. Without: every prompt, streamed page by page
  // (chunked-json.ts), the bytes of the one-piece answer.
  app.get(`${PREFIX}/prompts`, session, async (request, reply) => {
    const granted = await callerFor(request, "read");
    const query = parseInput(promptPageQuery, request.query, "query");
    if (query.q !== undefined || query.page !== undefined || query.per_page !== undefined) {
      const q = query.q?.trim() ?? "";
      const page = query.page ?? 1;
      const perPage = query.per_page ?? PROMPT_PAGE_MAX;
      const found = await prompts.searchPage(granted, q, page, perPage, untilClientGoes(reply));
      const answer: DashboardPromptPage = {
        project: { id: granted.projectId, name: granted.projectName },
        role: granted.role,
        prompts: found.items,
        q,
        page,
        per_page: perPage,
        matching: found.matching,
        total: found.total,
        labels: found.labels,
      };
      return ok(answer);
    }
    const list: DashboardPromptList = {
      project: { id: granted.projectId, name: granted.projectName },
      role: granted.role,
      prompts: [],
    };
    const [head, tail] = envelopeAround({ ...list });
    return sendPagesAsJson(reply, head, prompts.listWithVariablesPages(granted), tail, inFlight);
  });

  app.post(`${PREFIX}/prompts`, session, async (request, reply) => {
    const granted = await callerFor(request, "write");
    const body = parseInput(createPromptBody, request.body, "body");
    reply.code(201);
    return ok(await prompts.create(granted, body));
  });

  app.get(`${PREFIX}/prompts/:id`, session, async (request) => {
    const granted = await callerFor(request, "read");
    const query = parseInput(readQuery, request.query, "query");
    return ok(await prompts.read(granted, promptIdParam(request.params), readOptionsOf(query)));
  });

  app.get(`${PREFIX}/prompts/:id/versions`, session, async (request) => {
    const granted = await callerFor(request, "read");
    const id = promptIdParam(request.params);
    const list = await prompts.listVersions(granted, id);
    if (!examples) return ok(list);
    // Additive: on how many of the prompt's saved examples each version has a kept result (docs/playground.md).
    const { of, tried } = await examples.tried(granted, id);
    return ok({
      ...list,
      versions: list.versions.map((v) => ({ ...v, examples: { tried: tried.get(v.version) ?? 0, of } })),
    });
  });

  app.put(`${PREFIX}/prompts/:id`, session, async (request) => {
    const granted = await callerFor(request, "write");
    const body = parseInput(saveVersionBody, request.body, "body");
    return ok(await prompts.save(granted, promptIdParam(request.params), body));
  });

  // Publish, as the service asks: whoever may replace what production serves may also stop serving it.
  app.delete(`${PREFIX}/prompts/:id`, session, async (request) => {
    const granted = await callerFor(request, "publish");
    return ok(await prompts.delete(granted, promptIdParam(request.params)));
  });

  app.post(`${PREFIX}/prompts/:id/publish`, session, async (request) => {
    const granted = await callerFor(request, "publish");
    const body = parseInput(publishBody, request.body ?? {}, "body");
    return ok(
      await prompts.publish(granted, promptIdParam(request.params), body.version ?? "latest", {
        label: body.label,
        percent: body.percent,
      }),
    );
  });

  app.delete(`${PREFIX}/prompts/:id/labels/:label`, session, async (request) => {
    const granted = await callerFor(request, "publish");
    return ok(await prompts.removeLabel(granted, promptIdParam(request.params), labelParam(request.params)));
  });
}
