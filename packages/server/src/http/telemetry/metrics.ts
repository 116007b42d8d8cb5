import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Store } from "../../store/index.js";
import { AnswersInFlight } from "../reads/chunked-json.js";
import type { ReadCache } from "../reads/read-cache.js";

export const METRICS_PATH = "/metrics";

/** What the metrics read from the rest of the app when scraped. */
export interface MetricSources {
  store: Store;
  cache: ReadCache | null;
  eventStreams: () => number;
  mcpListenStreams: () => number;
  /** Outcomes this instance holds, not yet written (docs/outcomes.md). */
  outcomesPending?: () => number;
}

/**
 * Responses that are long-lived streams (events, MCP listen streams): counted like any request, but kept out
 * of the latency histogram, where their lifetime (minutes, hours) would drown every real latency.
 */
const streams = new WeakSet<IncomingMessage>();
export const markStream = (request: IncomingMessage) => streams.add(request);

const DURATION = "promptstore_http_request_duration_seconds";
/** What resolved a prompt read, as counted: a label other than production is `label`, never its name. */
export type ReadKind = "production" | "latest" | "label" | "version";
const LOOP_SAMPLE_MS = 10;
const LOOP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One method and route's answers: counts by status, and the latency histogram (per bucket, not cumulative). */
interface RouteStats {
  method: string;
  route: string;
  statuses: Map<number, number>;
  /** One slot per bucket, and a last one for above the largest. */
  buckets: number[];
  sum: number;
  count: number;
  rateLimited: number;
}

type Value = { labels: Record<string, string | number>; value: number; metricName?: string };

/** A metric prom-client's registry serializes, computed at scrape time from our own counts. */
function collector(name: string, help: string, type: "counter" | "histogram", values: () => Value[]) {
  return {
    name,
    help,
    type,
    aggregator: "sum" as const,
    async get() {
      return { name, help, type, aggregator: "sum" as const, values: values() };
    },
  };
}

/**
 * The service's Prometheus metrics, in a registry of its own (one per app, so tests and embedders can run
 * several). Labels are route templates, methods and statuses only: never a project, prompt or key, which
 * would say what another tenant does and make the series unbounded.
 *
 * The per-request counts are plain numbers in maps, turned into samples only when scraped: prom-client's
 * labelled counters and histograms hash their labels on every call, 2 µs per request, about a tenth of a
 * cached read; this costs a few dozen nanoseconds.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly refusedConnections: Counter;
  /** Answers sent in chunks (unpaged lists), for the gauge of the largest. */
  readonly answersInFlight = new AnswersInFlight();
  private readonly loopSampler: NodeJS.Timeout;
  /** Playground runs by outcome (ok, error, stopped), and their time to first token. */
  readonly runs: Counter<"outcome">;
  readonly runFirstToken: Histogram;
  /** Evaluations by how they ended (done, failed, stopped; reused when nothing was asked), their cases, provider time. */
  readonly evaluations: Counter<"outcome">;
  readonly evaluationCases: Counter<"outcome">;
  readonly evaluationProviderTime: Histogram;
  /** Outcomes reported, by result: accepted, refused, dropped (docs/outcomes.md). */
  readonly outcomes: Counter<"result">;
  private readonly byMethod = new Map<string, Map<string, RouteStats>>();
  /** Prompt reads by what served them (a ReadKind) and the rollout arm: `kind\u0000arm`. */
  private readonly labelReads = new Map<string, number>();

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const all = () => [...this.byMethod.values()].flatMap((routes) => [...routes.values()]);
    this.registry.registerMetric(
      collector(
        "promptstore_http_requests_total",
        "HTTP requests answered, by method, route template and status",
        "counter",
        () =>
          all().flatMap((r) =>
            [...r.statuses].map(([status, value]) => ({
              labels: { method: r.method, route: r.route, status: String(status) },
              value,
            })),
          ),
      ) as never,
    );
    this.registry.registerMetric(
      collector(
        DURATION,
        "Time from a request's arrival to the end of its answer (event and MCP listen streams left out)",
        "histogram",
        () =>
          all()
            .filter((r) => r.count > 0)
            .flatMap((r) => {
              const labels = { method: r.method, route: r.route };
              let cumulative = 0;
              const buckets = r.buckets.map((n, i) => {
                cumulative += n;
                const le = i < DURATION_BUCKETS.length ? (DURATION_BUCKETS[i] as number) : "+Inf";
                return { labels: { ...labels, le }, value: cumulative, metricName: `${DURATION}_bucket` };
              });
              return [
                ...buckets,
                { labels, value: r.sum, metricName: `${DURATION}_sum` },
                { labels, value: r.count, metricName: `${DURATION}_count` },
              ];
            }),
      ) as never,
    );
    this.registry.registerMetric(
      collector(
        "promptstore_rate_limited_requests_total",
        "Requests refused with 429 (plan request budget, event stream cap, invalid-key throttle), by route",
        "counter",
        () => {
          const byRoute = new Map<string, number>();
          for (const r of all())
            if (r.rateLimited > 0) byRoute.set(r.route, (byRoute.get(r.route) ?? 0) + r.rateLimited);
          return [...byRoute].map(([route, value]) => ({ labels: { route }, value }));
        },
      ) as never,
    );
    this.registry.registerMetric(
      collector(
        "promptstore_prompt_reads_total",
        "Prompt reads (v2 and v1) by what resolved them (production, latest, label for any other label, version) and the rollout arm (none, current, candidate)",
        "counter",
        () =>
          [...this.labelReads].map(([key, value]) => {
            const [label, arm] = key.split("\u0000") as [string, string];
            return { labels: { label, arm }, value };
          }),
      ) as never,
    );
    this.refusedConnections = new Counter({
      name: "promptstore_connections_refused_total",
      help: "Connections closed on arrival: over PROMPTSTORE_MAX_CONNECTIONS or the per-address cap",
      registers,
    });
    this.runs = new Counter({
      name: "promptstore_runs_total",
      help: "Playground runs (a prompt sent to a model connection) by outcome: ok, error, stopped",
      labelNames: ["outcome"],
      registers,
    });
    this.runFirstToken = new Histogram({
      name: "promptstore_run_time_to_first_token_seconds",
      help: "From the model call to its first piece of answer",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    });
    this.evaluations = new Counter({
      name: "promptstore_evaluations_total",
      help: "Evaluations that ended, by outcome: done, failed, stopped, reused (done at once from kept results)",
      labelNames: ["outcome"],
      registers,
    });
    this.evaluationCases = new Counter({
      name: "promptstore_evaluation_cases_total",
      help: "Evaluation cells (one case on one version) judged, by outcome: passed, failed, errored",
      labelNames: ["outcome"],
      registers,
    });
    this.evaluationProviderTime = new Histogram({
      name: "promptstore_evaluation_provider_seconds",
      help: "An evaluation's model call, from request to the answer's end",
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers,
    });
    this.outcomes = new Counter({
      name: "promptstore_outcomes_total",
      help: "Outcomes reported (POST /api/v2/outcomes) by result: accepted (placed and kept), refused (could not be placed: never kept), dropped (not kept: this instance's buffer was full or its writes failed)",
      labelNames: ["result"],
      registers,
    });
    for (const result of ["accepted", "refused", "dropped"]) this.outcomes.inc({ result }, 0);
    new Gauge({
      name: "promptstore_outcomes_pending",
      help: "Outcomes this instance holds, folded, until its next write (once a second)",
      registers,
      collect() {
        this.set(sources.outcomesPending?.() ?? 0);
      },
    });
    const { cache } = sources;
    new Counter({
      name: "promptstore_read_cache_hits_total",
      help: "Prompt reads answered from the read cache",
      registers,
      collect() {
        this.reset();
        this.inc(cache?.hits ?? 0);
      },
    });
    new Counter({
      name: "promptstore_read_cache_misses_total",
      help: "Prompt reads the read cache did not hold (each went to the database or joined a read in flight)",
      registers,
      collect() {
        this.reset();
        this.inc(cache?.misses ?? 0);
      },
    });
    new Gauge({
      name: "promptstore_open_streams",
      help: "Open long-lived streams: events (GET /api/v2/events) and mcp (subscriptions/listen)",
      labelNames: ["kind"],
      registers,
      collect() {
        this.set({ kind: "events" }, sources.eventStreams());
        this.set({ kind: "mcp" }, sources.mcpListenStreams());
      },
    });
    new Gauge({
      name: "promptstore_largest_answer_in_flight_bytes",
      help: "The largest answer being sent in chunks (an unpaged list), in bytes sent so far; 0 when none is",
      registers,
      collect() {
        this.set(answers.largest());
      },
    });
    const answers = this.answersInFlight;
    const loopDelay = new Histogram({
      name: "promptstore_event_loop_delay_seconds",
      help: `How late a timer due every ${LOOP_SAMPLE_MS} ms ran: the time the event loop was held by work`,
      buckets: LOOP_BUCKETS,
      registers,
    });
    this.loopSampler = sampleLoopDelay((seconds) => loopDelay.observe(seconds));
    const { health } = sources.store;
    new Counter({
      name: "promptstore_database_errors_total",
      help: "Database faults met (connection lost or refused, restarting, disk full, read-only, I/O), by reason",
      labelNames: ["reason"],
      registers,
      collect() {
        this.reset();
        for (const [reason, count] of health.faults) this.inc({ reason }, count);
      },
    });
    new Counter({
      name: "promptstore_database_reconnections_total",
      help: "Recoveries from a database outage: pool (a query succeeded again), listen (the change channel's connection)",
      labelNames: ["connection"],
      registers,
      collect() {
        this.reset();
        this.inc({ connection: "pool" }, health.reconnections.pool);
        this.inc({ connection: "listen" }, health.reconnections.listen);
      },
    });
    new Gauge({
      name: "promptstore_database_up",
      help: "1 while the database answers the store's queries, 0 from a fault until the next success",
      registers,
      collect() {
        this.set(health.reachable ? 1 : 0);
      },
    });
    new Counter({
      name: "promptstore_reads_served_while_unavailable_total",
      help: "Prompt reads answered from memory (what this instance last served) because the database could not answer",
      registers,
      collect() {
        this.reset();
        this.inc(cache?.servedWhileUnavailable ?? 0);
      },
    });
    new Gauge({
      name: "promptstore_db_pool_connections",
      help: "Database connections: max (the pool's size), open, idle, and waiting (queries queued for one)",
      labelNames: ["state"],
      registers,
      collect() {
        const usage = sources.store.poolUsage();
        this.set({ state: "max" }, usage.max);
        this.set({ state: "open" }, usage.open);
        if (usage.idle !== undefined) this.set({ state: "idle" }, usage.idle);
        if (usage.waiting !== undefined) this.set({ state: "waiting" }, usage.waiting);
      },
    });
  }

  /** Stops the event-loop sampler (the app's onClose). */
  close(): void {
    clearInterval(this.loopSampler);
  }

  /** Counts one answered request; `ms` is how long it took. */
  /**
   * Counts a prompt read by its kind, never by a label's name: names are the tenants' own words, and the
   * metrics say nothing of any tenant (operations.md). Four kinds by three arms bound the series.
   */
  countRead(kind: ReadKind, arm: "none" | "current" | "candidate"): void {
    const key = `${kind}\u0000${arm}`;
    this.labelReads.set(key, (this.labelReads.get(key) ?? 0) + 1);
  }

  record(request: IncomingMessage, method: string, route: string, status: number, ms: number): void {
    let routes = this.byMethod.get(method);
    if (!routes) {
      routes = new Map();
      this.byMethod.set(method, routes);
    }
    let stats = routes.get(route);
    if (!stats) {
      stats = {
        method,
        route,
        statuses: new Map(),
        buckets: new Array(DURATION_BUCKETS.length + 1).fill(0),
        sum: 0,
        count: 0,
        rateLimited: 0,
      };
      routes.set(route, stats);
    }
    stats.statuses.set(status, (stats.statuses.get(status) ?? 0) + 1);
    if (status === 429) stats.rateLimited++;
    if (streams.has(request)) return;
    const seconds = ms / 1000;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[bucket] as number)) bucket++;
    stats.buckets[bucket] = (stats.buckets[bucket] as number) + 1;
    stats.sum += seconds;
    stats.count++;
  }
}

/**
 * Every LOOP_SAMPLE_MS a timer notes how late it ran. prom-client's default metrics already report
 * monitorEventLoopDelay's percentiles (`nodejs_eventloop_lag_p99_seconds`…), but as gauges over the process's
 * whole life, which neither add up across instances nor show one window; this histogram does both
 * (`histogram_quantile(0.99, rate(promptstore_event_loop_delay_seconds_bucket[5m]))`).
 */
function sampleLoopDelay(observe: (seconds: number) => void): NodeJS.Timeout {
  let expected = performance.now() + LOOP_SAMPLE_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    observe(Math.max(0, now - expected) / 1000);
    expected = now + LOOP_SAMPLE_MS;
  }, LOOP_SAMPLE_MS);
  timer.unref();
  return timer;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Every answered request is counted by its route template; requests that matched no route are "unmatched",
 * so a scan of random paths adds one series, not thousands.
 */
export function countRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook("onResponse", (request, reply, done) => {
    metrics.record(
      request.raw,
      request.method,
      request.routeOptions.url ?? "unmatched",
      reply.statusCode,
      reply.elapsedTime,
    );
    done();
  });
}

/** `GET /metrics` serves the registry; with a token, a scrape must carry `Authorization: Bearer <token>`. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  const expected = token === undefined ? undefined : digest(token);
  app.get(METRICS_PATH, async (request, reply) => {
    if (expected) {
      const given = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
      // Digests have one length, so the comparison takes the same time whatever was sent.
      if (given === undefined || !timingSafeEqual(digest(given), expected)) {
        reply.header("www-authenticate", 'Bearer realm="metrics"');
        throw new AppError("unauthorized", "authorization: a valid bearer token is required for the metrics");
      }
    }
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
