import { AppError } from "@promptstore/core/errors";
import { EVENT_TYPES } from "@promptstore/core/events";
import { describeZodError } from "@promptstore/core/schemas";
import {
  createWebhookBody,
  type DeliveryView,
  deliveriesQuery,
  updateWebhookBody,
  type WebhookView,
} from "@promptstore/core/webhooks";
import type { Command } from "commander";
import type { z } from "zod";
import { loadConfig } from "../config.js";
import { openSecrets } from "../secrets/open-secrets.js";
import { SecretKeyError } from "../secrets/secret-key.js";
import { WebhookSecrets } from "../service/webhooks/webhook-secrets.js";
import { type ProjectWebhooks, WebhookService } from "../service/webhooks/webhook-service.js";
import { TenantStore } from "../store/accounts/tenants.js";
import { DEFAULT_SQLITE_PATH, openStore } from "../store/index.js";
import { WebhookStore } from "../store/webhooks.js";
import { CliError, emit } from "./output.js";

interface JsonFlag {
  json?: boolean;
}

interface EndpointFlags extends JsonFlag {
  url?: string;
  events?: string;
  description?: string;
}

/**
 * The CLI's own store and service; deliveries are sent by running servers, never from here. The secret key
 * is opened (and proven) as `serve` opens it: a secret created or rotated here is sealed with it, and the
 * list says which secrets cannot sign.
 */
async function withWebhooks<T>(work: (webhooks: WebhookService, tenants: TenantStore) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.DATABASE_URL);
  try {
    const { box } = await openSecrets(config, store, config.DATABASE_URL || DEFAULT_SQLITE_PATH);
    const webhooks = new WebhookService(
      new WebhookStore(store.db),
      { allowPrivate: config.PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE },
      new WebhookSecrets(box),
    );
    return await work(webhooks, new TenantStore(store.db));
  } catch (error) {
    // The service's refusals are the user's to act on: one line, like every other CLI failure.
    if (error instanceof AppError || error instanceof SecretKeyError) throw new CliError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

/** The operator at the command line holds every power (and reads the database directly anyway). */
const operatorOf = (webhooks: WebhookService, projectId: string): ProjectWebhooks =>
  webhooks.of({ projectId, access: "publish" });

async function projectEndpoints(webhooks: WebhookService, tenants: TenantStore, ref: string) {
  const found = await tenants.findProjects(ref);
  if (found.length === 0) throw new CliError(`project ${ref} not found`);
  if (found.length > 1) throw new CliError(`project name ${ref} is ambiguous; use the project id`);
  return operatorOf(webhooks, (found[0] as { id: string }).id);
}

/** The endpoints of the project that holds endpoint `id`. */
async function endpointProject(webhooks: WebhookService, id: string): Promise<ProjectWebhooks> {
  const found = await webhooks.store.projectOf(id);
  if (found === undefined) throw new CliError(`webhook ${id} not found`);
  return operatorOf(webhooks, found);
}

const eventList = (value: string): string[] =>
  value
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);

/** Validates with the REST schema, so the CLI refuses exactly what the API refuses, in the same words. */
function parse<S extends z.ZodType>(schema: S, value: unknown, root: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new CliError(describeZodError(result.error, root));
  return result.data;
}

function line(w: WebhookView): string {
  const rotate = w.secret_needs_rotation
    ? `  SECRET NEEDS ROTATING (promptstore webhook update ${w.id} --rotate-secret)`
    : "";
  return `${w.id}  ${w.enabled ? "enabled" : "disabled"}  ${w.url}  ${w.events.join(",")}${w.description ? `  (${w.description})` : ""}${rotate}`;
}

function deliveryLine(d: DeliveryView): string {
  const answer = d.last_response_code === null ? "" : `  HTTP ${d.last_response_code}`;
  const next = d.next_attempt_at ? `  next ${d.next_attempt_at}` : "";
  const error = d.last_error ? `  ${d.last_error}` : "";
  return `${d.id}  ${d.status.padEnd(9)}  ${d.event_type} ${d.prompt_id} (event ${d.event_id})  attempts ${d.attempts}${answer}${next}${error}`;
}

/** `promptstore webhook …`: a project's endpoints, as the REST API and the dashboard manage them. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program.command("webhook").description("manage webhook endpoints (signed POSTs of change events)");
  webhook
    .command("create <project>")
    .description("create an endpoint for a project (id or unique name); its signing secret is printed once")
    .requiredOption("--url <url>", "where events are POSTed (http:// or https://)")
    .option("--events <types>", `comma-separated event types (default: all of ${EVENT_TYPES.join(",")})`)
    .option("--description <text>", "a note for people")
    .option("--disabled", "create it disabled: nothing is queued for it until it is enabled")
    .option("--json", "machine-readable output")
    .action(async (ref: string, opts: EndpointFlags & { disabled?: boolean }) => {
      const body = parse(
        createWebhookBody,
        {
          url: opts.url,
          events: opts.events === undefined ? [...EVENT_TYPES] : eventList(opts.events),
          ...(opts.description !== undefined ? { description: opts.description } : {}),
          ...(opts.disabled ? { enabled: false } : {}),
        },
        "body",
      );
      const created = await withWebhooks(async (w, t) => (await projectEndpoints(w, t, ref)).create(body));
      emit(!!opts.json, created, () =>
        [`created webhook ${line(created)}`, `signing secret (shown once, store it now): ${created.secret}`].join("\n"),
      );
    });
  webhook
    .command("list <project>")
    .description("list a project's endpoints (secrets are never shown)")
    .option("--json", "machine-readable output")
    .action(async (ref: string, opts: JsonFlag) => {
      const list = await withWebhooks(async (w, t) => (await projectEndpoints(w, t, ref)).list());
      emit(!!opts.json, list, () => (list.length === 0 ? "no webhooks" : list.map(line).join("\n")));
    });
  webhook
    .command("update <webhook-id>")
    .description("change an endpoint; --rotate-secret prints a new signing secret once")
    .option("--url <url>", "a new URL")
    .option("--events <types>", "comma-separated event types")
    .option("--description <text>", "a new note")
    .option("--enable", "queue and send events again")
    .option("--disable", "stop queueing events; queued ones wait until it is enabled")
    .option("--rotate-secret", "replace the signing secret at once")
    .option("--json", "machine-readable output")
    .action(
      async (id: string, opts: EndpointFlags & { enable?: boolean; disable?: boolean; rotateSecret?: boolean }) => {
        if (opts.enable && opts.disable) throw new CliError("enabled: give --enable or --disable, not both");
        const fields = {
          ...(opts.url !== undefined ? { url: opts.url } : {}),
          ...(opts.events !== undefined ? { events: eventList(opts.events) } : {}),
          ...(opts.description !== undefined ? { description: opts.description } : {}),
          ...(opts.enable ? { enabled: true } : opts.disable ? { enabled: false } : {}),
        };
        const changes = Object.keys(fields).length > 0 ? parse(updateWebhookBody, fields, "body") : undefined;
        if (!changes && !opts.rotateSecret) {
          throw new CliError(
            "nothing to change: give --url, --events, --description, --enable, --disable or --rotate-secret",
          );
        }
        const updated = await withWebhooks(async (w) => {
          const project = await endpointProject(w, id);
          const view = changes ? await project.update(id, changes) : await project.get(id);
          return opts.rotateSecret ? project.rotateSecret(id) : view;
        });
        emit(!!opts.json, updated, () => {
          const lines = [`updated webhook ${line(updated)}`];
          if ("secret" in updated) lines.push(`new signing secret (shown once, store it now): ${updated.secret}`);
          return lines.join("\n");
        });
      },
    );
  webhook
    .command("remove <webhook-id>")
    .description("remove an endpoint and its deliveries, pending ones included")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: JsonFlag) => {
      const removed = await withWebhooks(async (w) => (await endpointProject(w, id)).remove(id));
      emit(!!opts.json, removed, () => `removed webhook ${removed.id}`);
    });
  webhook
    .command("deliveries <webhook-id>")
    .description("an endpoint's recent deliveries, newest first: status, attempts, last answer, next attempt")
    .option("--status <status>", "only pending, delivered or failed")
    .option("--limit <n>", "how many, 1-100 (default 50)")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: JsonFlag & { status?: string; limit?: string }) => {
      const query = parse(
        deliveriesQuery,
        {
          ...(opts.status !== undefined ? { status: opts.status } : {}),
          ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
        },
        "query",
      );
      const list = await withWebhooks(async (w) => (await endpointProject(w, id)).deliveries(id, query));
      emit(!!opts.json, list, () => (list.length === 0 ? "no deliveries" : list.map(deliveryLine).join("\n")));
    });
}
