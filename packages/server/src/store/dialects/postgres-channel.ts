import { randomUUID } from "node:crypto";
import type { Change } from "@promptstore/core/change";
import { sql } from "kysely";
import pg from "pg";
import type { Announcement, ChangeChannel } from "../change-channel.js";
import type { DatabaseHealth } from "../health.js";
import { Acknowledgements, type Listener } from "./acknowledgements.js";

const CHANGES = "promptstore_changes";
/** Each process hears acknowledgements on a channel of its own: this prefix and its instance id. */
const ACKS = "promptstore_ack_";
/** The application_name of an instance's listening connection: how writers know who is live. */
const LISTENER = "promptstore instance ";
/** The listening connections on this database (pg_stat_activity's function: the view costs 0.3 ms more). */
const LISTENERS = `select application_name as name, pid from pg_stat_get_activity(null)
  where datid = (select oid from pg_database where datname = current_database())
    and application_name like '${LISTENER}%'`;
/** Waits between reconnection attempts: at most a second, so caches are back within one of the database. */
const RECONNECT_MS = [100, 250, 500, 1000];
const PRESENCE_POLL_MS = 50;
/**
 * PostgreSQL keeps the backend of a client whose machine vanished (no FIN) until TCP gives up, by default
 * for hours; each write would wait out its deadline for it meanwhile. These bound that to seconds.
 * Set only where the server knows them (tcp_user_timeout is PostgreSQL 12+).
 */
const DEAD_PEER_SETTINGS = `select set_config(name, setting, false) from (values
  ('tcp_keepalives_idle', '10'), ('tcp_keepalives_interval', '5'), ('tcp_keepalives_count', '3'),
  ('tcp_user_timeout', '10000')) as wanted(name, setting) where name in (select name from pg_settings)`;

/** On CHANGES. `id` is absent from instances older than acknowledgements, which are never waited for. */
interface Notice {
  origin?: string;
  id?: string;
  change?: Change;
}

/** On ACKS + the announcer's id: `from` has dropped what change `id` made stale. */
interface Ack {
  id?: string;
  from?: string;
}

/**
 * PostgreSQL LISTEN/NOTIFY, no extra service. A change is notified inside its write's transaction, so it
 * reaches every listener exactly when it commits; but each listener takes it in on its own time, and a
 * read may reach that instance first. So every listener, once it has dropped what a change made stale,
 * acknowledges it on the announcer's own channel, and the announcer waits after commit (bounded by
 * `timeoutMs`) for every instance that listened when it announced. Who listens is read from
 * pg_stat_activity in the announcing statement itself: an instance advertises its listening connection's
 * application_name only once its LISTEN is in place, and a dead one's connection is gone with it.
 */
export function postgresChannel(url: string, options: { timeoutMs: number; health: DatabaseHealth }): ChangeChannel {
  const instance = randomUUID().replaceAll("-", "");
  const listenerName = LISTENER + instance;
  // Until listen() names where problems go (the server's log); a process that does not listen (the CLI)
  // shows them on stderr.
  let report = (error: unknown) => process.emitWarning(String(error), "PromptstoreWarning");
  let deliver: ((change: Change) => void) | undefined;
  /** The connection that hears acknowledgements and, once listen() is called, changes. */
  let client: pg.Client | undefined;
  let opening: Promise<void> | undefined;
  let reconnecting = false;
  let closed = false;
  let attempt = 0;
  const advertised = new WeakSet<pg.Client>();

  const present = async (): Promise<Listener[]> => {
    if (!client) throw new Error("change channel: not connected");
    const { rows } = await client.query<{ name: string; pid: number }>(LISTENERS);
    return rows.map(toListener);
  };

  const acks = new Acknowledgements({
    timeoutMs: options.timeoutMs,
    pollMs: PRESENCE_POLL_MS,
    present,
    late: (what, missing, timeoutMs) =>
      report(
        new Error(
          `change channel: ${what} not acknowledged within ${timeoutMs} ms by ${missing.length} instance(s) ` +
            `(${missing.map((l) => `${l.instance} pid ${l.pid}`).join(", ")}); the write answers anyway, ` +
            "and they may serve what it made stale until they take it in",
        ),
      ),
  });

  const hear = (from: pg.Client, message: pg.Notification): void => {
    try {
      if (message.channel === CHANGES) {
        const notice = JSON.parse(message.payload ?? "{}") as Notice;
        if (!deliver || !notice.change || !notice.origin || notice.origin === instance) return;
        deliver(notice.change);
        if (notice.id) {
          const ack: Ack = { id: notice.id, from: instance };
          from.query("select pg_notify($1, $2)", [ACKS + notice.origin, JSON.stringify(ack)]).catch(report);
        }
      } else {
        const ack = JSON.parse(message.payload ?? "{}") as Ack;
        if (ack.id && ack.from) acks.acknowledge(ack.id, ack.from);
      }
    } catch (error) {
      report(error);
    }
  };

  /** Listens for changes and only then says so: whoever sees the name can count on the LISTEN. */
  const advertise = async (session: pg.Client): Promise<void> => {
    await session.query(`LISTEN ${CHANGES}`);
    await session.query("select set_config('application_name', $1, false)", [listenerName]);
    advertised.add(session);
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    next.on("notification", (message) => hear(next, message));
    next.on("error", (error) => lost(next, error));
    next.on("end", () => lost(next));
    try {
      await next.connect();
      await next.query(DEAD_PEER_SETTINGS);
      await next.query(`LISTEN "${ACKS}${instance}"`);
      if (deliver) await advertise(next);
    } catch (error) {
      await next.end().catch(() => {});
      throw error;
    }
    client = next;
    attempt = 0;
  };

  const start = (): Promise<void> => {
    opening ??= connect().finally(() => {
      opening = undefined;
    });
    return opening;
  };

  const lost = (which: pg.Client, error?: unknown): void => {
    if (client !== which) return;
    client = undefined;
    which.end().catch(() => {});
    if (closed) return;
    if (error) report(error);
    // Changes announced from now on will not reach us: nothing cached may be served while the database can
    // answer instead, until we are back.
    deliver?.({ kind: "deaf" });
    void reconnect();
  };

  const reconnect = async (): Promise<void> => {
    if (reconnecting) return;
    reconnecting = true;
    try {
      while (!closed && !client) {
        await new Promise((r) => setTimeout(r, RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]));
        if (closed) return;
        try {
          await start();
          options.health.reconnections.listen++;
          // Whatever was announced while we were away is lost, and reads meanwhile may have cached it.
          deliver?.({ kind: "reset" });
        } catch (error) {
          // Reported once per outage by the health it marks, not once per attempt.
          options.health.failed(error);
        }
      }
    } finally {
      reconnecting = false;
    }
  };

  const close = async (): Promise<void> => {
    closed = true;
    deliver = undefined;
    await opening?.catch(() => {});
    const last = client;
    client = undefined;
    await last?.end().catch(() => {});
  };

  return {
    async announce(db, change) {
      // Acknowledgements can only be heard on a live connection; without one the write does not wait.
      if (!client && !reconnecting && !closed && options.timeoutMs > 0) await start().catch(report);
      const listening = client !== undefined && options.timeoutMs > 0;
      const id = randomUUID();
      const notice: Notice = { origin: instance, id, change };
      if (listening) acks.open(id, describeChange(change));
      let others: Listener[];
      try {
        const { rows } = await sql<{ listeners: { name: string; pid: number }[] | null }>`
          select pg_notify(${CHANGES}, ${JSON.stringify(notice)}) as notified,
            (select json_agg(l) from (${sql.raw(LISTENERS)}) l) as listeners`.execute(db);
        others = (rows[0]?.listeners ?? []).map(toListener).filter((l) => l.instance !== instance);
      } catch (error) {
        acks.withdraw(id);
        throw error;
      }
      if (!listening) return undefined;
      if (others.length === 0) {
        acks.withdraw(id);
        return undefined;
      }
      acks.expect(id, others);
      return { delivered: () => acks.wait(id), withdraw: () => acks.withdraw(id) } satisfies Announcement;
    },

    async listen(onChange, onError) {
      deliver = onChange;
      report = onError;
      await start();
      if (client && !advertised.has(client)) await advertise(client);
      return close;
    },

    close,
  };
}

const toListener = (row: { name: string; pid: number }): Listener => ({
  instance: row.name.slice(LISTENER.length),
  pid: row.pid,
});

function describeChange(change: Change): string {
  return change.kind === "prompt" ? `change to prompt ${change.promptId}` : `${change.kind} change`;
}
