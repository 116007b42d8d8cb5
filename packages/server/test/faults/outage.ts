/**
 * Two real server processes on a PostgreSQL of the test's own, with a prompt cached on both, an event
 * stream open, and steady traffic; a test makes the database fail and then checks what was answered.
 */
import { afterEach, beforeEach, expect } from "vitest";
import { cliJson, type RunningServer, startServer } from "../support/binary.js";
import { type PrivatePostgres, startPrivatePostgres } from "../support/private-postgres.js";
import { type EventStreamReader, openEventStream } from "../support/sse.js";
import { type Sample, startTraffic, type Traffic } from "./traffic.js";

export interface Outage {
  postgres: PrivatePostgres;
  servers: RunningServer[];
  urls: string[];
  key: string;
  /** The production read of `stable` as each instance cached it before the fault. */
  stableBefore: any;
  stream: EventStreamReader;
  /** The id of the last event the stream had before the fault. */
  lastEventIdBefore: string;
  call(instance: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Runs traffic around `fault`; `back` is when the database is reachable again (the fault resolved). */
  during(fault: () => Promise<void>, afterMs?: number): Promise<{ traffic: Traffic; back: number }>;
}

export function useOutage(env: Record<string, string> = {}): Outage {
  const context = { servers: [] as RunningServer[], urls: [] as string[] } as Outage;
  beforeEach(async () => {
    context.postgres = await startPrivatePostgres();
    const first = await startServer(context.postgres.url, env);
    context.servers.push(first);
    await cliJson(context.postgres.url, ["org", "set-plan", "default", "unlimited"]);
    context.servers.push(await startServer(context.postgres.url, env));
    context.urls = context.servers.map((s) => s.url);
    context.key = first.events.find((e) => e.event === "bootstrap")?.key.key;
    context.call = async (instance, method, path, body) => {
      const res = await fetch(`${context.urls[instance]}${path}`, {
        method,
        headers: { "x-api-key": context.key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.json() };
    };
    for (const id of ["stable", "doc"]) {
      const created = await context.call(0, "POST", "/api/v2/prompts", {
        id,
        name: id,
        markdown: `# Role\nThe ${id} prompt.`,
        publish: true,
      });
      expect(created.status).toBe(201);
    }
    const reads = [
      await context.call(0, "GET", "/api/v2/prompts/stable"),
      await context.call(1, "GET", "/api/v2/prompts/stable"),
    ];
    expect(reads.map((r) => r.status)).toEqual([200, 200]);
    expect(reads[1]?.body).toEqual(reads[0]?.body);
    context.stableBefore = reads[0]?.body;
    context.stream = await openEventStream(context.urls[0] as string, context.key);
    const published = await context.stream.next((e) => e.event === "ready");
    context.lastEventIdBefore = published.id as string;
    context.during = async (fault, afterMs = 3_000) => {
      const traffic = startTraffic(context.urls, context.key, "stable");
      await new Promise((resolve) => setTimeout(resolve, 500));
      await fault();
      const back = Date.now();
      await new Promise((resolve) => setTimeout(resolve, afterMs));
      await traffic.stop();
      return { traffic, back };
    };
  });
  afterEach(async () => {
    context.stream?.close();
    for (const server of context.servers.splice(0)) await server.stop("SIGKILL");
    await context.postgres?.remove();
  });
  return context;
}

/** What every fault test asserts of the recorded traffic. */
export function expectSurvived(outage: Outage, traffic: Traffic, back: number): void {
  // No instance ended.
  for (const server of outage.servers) expect(server.process.exitCode).toBe(null);
  const { samples } = traffic;
  // Nothing but success or 503 with Retry-After, in the envelope, naming the database: no 500, no dropped
  // connection.
  const statuses = new Set(samples.map((s) => s.status));
  expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);
  for (const sample of samples.filter((s) => s.status === 503)) {
    expect(sample.retryAfter).toBe("2");
    expect(sample.body.success).toBe(false);
    expect(sample.body.error).toMatch(/^database/);
  }
  // The prompt each instance had cached was answered from memory all along, as it was before.
  const cached = samples.filter((s) => s.kind === "cached");
  expect(cached.filter((s) => s.status !== 200)).toEqual([]);
  for (const sample of cached) expect(sample.body).toEqual(outage.stableBefore);
  // Within 2 s of the database being back, every request succeeds.
  const late = samples.filter((s) => s.startedAt >= back + 2_000);
  expect(late.length).toBeGreaterThan(20);
  expect(late.filter((s) => s.status !== 200)).toEqual([]);
  // No request hung (the server's request timeout is 30 s; a database call gives up after 5 s).
  expect(Math.max(...samples.map((s) => s.endedAt - s.startedAt))).toBeLessThan(10_000);
}

/**
 * Every save answered 200 is in the history; a save answered that nothing was changed is not; only one
 * answered that it may have been saved may be either. Returns the history's size.
 */
export async function expectNoWriteLost(outage: Outage, traffic: Traffic): Promise<number> {
  const history = await outage.call(1, "GET", "/api/v2/prompts/doc/versions");
  expect(history.status).toBe(200);
  const versions: string[] = history.body.data.versions.map((v: { version: string }) => v.version);
  expect(traffic.acknowledged.size).toBeGreaterThan(10);
  for (const version of traffic.acknowledged) expect(versions).toContain(version);
  const stored = new Set<number>();
  for (const version of versions) {
    const read = await outage.call(1, "GET", `/api/v2/prompts/doc?version=${version}&guard=false`);
    const number = /save number (\d+)/.exec(read.body.data.sections[0].content)?.[1];
    if (number !== undefined) stored.add(Number(number));
  }
  const sent = traffic.samples.filter((s) => s.kind === "save").map((s) => s.save as number);
  for (const n of sent) {
    if (traffic.saved.has(n)) expect(stored.has(n), `save ${n} was acknowledged`).toBe(true);
    else if (!traffic.maybeSaved.has(n)) expect(stored.has(n), `save ${n} was answered as failed`).toBe(false);
  }
  // The version made before the traffic, and one per stored save.
  expect(versions.length).toBe(stored.size + 1);
  return versions.length;
}

/** After the fault a write on one instance is seen at once on the other: nothing stale is served. */
export async function expectFreshAfter(outage: Outage): Promise<void> {
  const saved = await outage.call(1, "PUT", "/api/v2/prompts/stable", {
    markdown: "# Role\nChanged after the fault.",
    publish: true,
  });
  expect(saved.status).toBe(200);
  for (const instance of [0, 1]) {
    const read = await outage.call(instance, "GET", "/api/v2/prompts/stable");
    expect(read.body.data.version).toBe(saved.body.data.version);
  }
  // The stream opened before the fault is still open and hears it.
  const event = await outage.stream.next(
    (e) => e.event === "prompt.published" && JSON.parse(e.data as string).version === saved.body.data.version,
  );
  expect(event.event).toBe("prompt.published");
}

/** The log said what happened once per outage: one line when it started, one when it ended. */
export function logLines(server: RunningServer, message: string): number {
  return server.logs.filter((line) => line.msg === message).length;
}

export const only = (samples: Sample[], kind: Sample["kind"]) => samples.filter((s) => s.kind === kind);
