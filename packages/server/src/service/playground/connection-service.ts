import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import {
  CONNECTION_ID,
  type ConnectionView,
  type CreateConnectionBody,
  PLAYGROUND_LIMITS,
  type UpdateConnectionBody,
} from "@promptstore/core/playground";
import type { SecretBox } from "../../secrets/secret-box.js";
import { newId, now } from "../../store/ids.js";
import type { ConnectionRow, PlaygroundStore } from "../../store/playground.js";
import { type Caller, requireAccess, requirePerson } from "../access.js";
import { literalAddress, refusedAddress } from "../webhook-address.js";
import { MODEL_ALLOW_PRIVATE_HINT } from "./model-call.js";

export interface ConnectionServiceOptions {
  /** PROMPTSTORE_MODEL_ALLOW_PRIVATE: connections may be on private, loopback and link-local addresses. */
  allowPrivate: boolean;
}

/** Who manages connections: an owner in the dashboard, or the operator at the command line. */
export type ConnectionManager = Pick<Caller, "projectId" | "role"> & { operator?: true };

/** A connection opened for a call: where, and its key unsealed (held only for the call). */
export interface OpenConnection {
  id: string;
  baseUrl: string;
  apiKey: string | null;
  /** The models it offers, as listed; the first is a run's model when neither version nor run names one. */
  models: string[];
}

function toView(row: ConnectionRow): ConnectionView {
  return {
    id: row.id,
    name: row.name,
    base_url: row.base_url,
    models: JSON.parse(row.models) as string[],
    has_key: row.api_key !== null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const sealContext = (id: string) => `connection:${id}`;
const notFoundError = (id: string) => notFound(`connection ${id.slice(0, 64)} not found`);

/**
 * A project's model connections. The API key is sealed with the server's secret key as it is written, and
 * unsealed only to make a call: no view, log line or backup holds it in the clear.
 */
export class ConnectionService {
  constructor(
    readonly store: PlaygroundStore,
    private readonly secrets: SecretBox,
    private readonly options: ConnectionServiceOptions,
  ) {}

  /**
   * Managing connections is an owner's (the `admin` permission, which no API key holds): a connection spends
   * the organization's money with a provider, and its address decides where the server sends prompts.
   */
  private requireManager(caller: ConnectionManager): void {
    if (caller.operator) return;
    requirePerson(caller, "admin", "managing model connections");
  }

  /** Listing is for every member: an editor picks a connection for a run; nothing secret is in a view. */
  async list(caller: Pick<Caller, "projectId" | "access" | "role">): Promise<ConnectionView[]> {
    requireAccess(caller, "read", "listing model connections");
    return (await this.store.listConnections(caller.projectId)).map(toView);
  }

  private checkUrl(url: string): void {
    if (this.options.allowPrivate) return;
    const literal = literalAddress(new URL(url).hostname);
    const what = literal === null ? null : refusedAddress(literal);
    if (literal !== null && what !== null) {
      throw badRequest(`base_url: refused: ${literal}, ${what}; ${MODEL_ALLOW_PRIVATE_HINT}`);
    }
  }

  private seal(id: string, apiKey: string | undefined): string | null {
    return apiKey === undefined || apiKey === "" ? null : this.secrets.encrypt(apiKey, sealContext(id));
  }

  async create(caller: ConnectionManager, body: CreateConnectionBody): Promise<ConnectionView> {
    this.requireManager(caller);
    this.checkUrl(body.base_url);
    const id = newId("con");
    const at = now();
    const row: ConnectionRow = {
      id,
      project_id: caller.projectId,
      name: body.name,
      base_url: body.base_url,
      api_key: this.seal(id, body.api_key),
      models: JSON.stringify(body.models ?? []),
      created_at: at,
      updated_at: at,
    };
    if (!(await this.store.createConnection(row, PLAYGROUND_LIMITS.connectionsPerProject))) {
      throw new AppError(
        "forbidden",
        `connections: a project may have at most ${PLAYGROUND_LIMITS.connectionsPerProject}; remove one first`,
      );
    }
    return toView(row);
  }

  /**
   * Changes a connection. The stored key belongs to the address it was entered for: moving the base URL to
   * another origin (scheme, host, port) without sending `api_key` (a new key, or `""` for none) is refused,
   * or any owner could send a key another owner entered to a host of their choosing.
   */
  async update(caller: ConnectionManager, id: string, body: UpdateConnectionBody): Promise<ConnectionView> {
    this.requireManager(caller);
    if (body.base_url !== undefined) this.checkUrl(body.base_url);
    const before = CONNECTION_ID.test(id) ? await this.store.findConnection(caller.projectId, id) : undefined;
    if (!before) throw notFoundError(id);
    const moves = body.base_url !== undefined && new URL(body.base_url).origin !== new URL(before.base_url).origin;
    const keyFollows = moves && body.api_key === undefined && before.api_key !== null;
    if (keyFollows) {
      throw badRequest(
        `api_key: the base URL moves to another origin (${new URL(before.base_url).origin} → ` +
          `${new URL(body.base_url as string).origin}); the stored key stays with the old one: send the key ` +
          `for the new address, or "" to keep none`,
      );
    }
    const patch: Partial<ConnectionRow> = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.base_url !== undefined) patch.base_url = body.base_url;
    if (body.api_key !== undefined) patch.api_key = this.seal(id, body.api_key);
    if (body.models !== undefined) patch.models = JSON.stringify(body.models);
    // Only from the address checked above: a move made meanwhile (with its own key) is not undone by this one.
    const from = body.base_url !== undefined && body.api_key === undefined ? before.base_url : undefined;
    if (!(await this.store.updateConnection(caller.projectId, id, patch, now(), from))) {
      const still = await this.store.findConnection(caller.projectId, id);
      if (!still) throw notFoundError(id);
      throw new AppError("conflict", `base_url: connection ${id} changed meanwhile; read it again and retry`);
    }
    return toView((await this.store.findConnection(caller.projectId, id)) as ConnectionRow);
  }

  async remove(caller: ConnectionManager, id: string): Promise<{ id: string; removed: true }> {
    this.requireManager(caller);
    if (!CONNECTION_ID.test(id) || !(await this.store.removeConnection(caller.projectId, id))) throw notFoundError(id);
    return { id, removed: true };
  }

  /** The connection's address and key for a call made on the project's behalf; the caller's right was checked. */
  async open(projectId: string, id: string): Promise<OpenConnection> {
    const row = await this.store.findConnection(projectId, id);
    if (!row) throw notFoundError(id);
    this.checkUrl(row.base_url);
    let apiKey: string | null = null;
    if (row.api_key !== null) {
      try {
        apiKey = this.secrets.decrypt(row.api_key, sealContext(id));
      } catch {
        // Restored under another key, or copied from another row: the owner must enter the key again.
        throw new AppError(
          "conflict",
          `connection: the API key of ${id} cannot be opened with this server's secret key; enter it again`,
        );
      }
    }
    return { id, baseUrl: row.base_url, apiKey, models: JSON.parse(row.models) as string[] };
  }
}
