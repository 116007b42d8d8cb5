import { shortHash } from "@promptstore/core/version-ref";
import { type PromptListItem, Promptstore, PromptstoreError } from "../../src/index.js";
import { CliError } from "../output.js";

export interface RemoteOptions {
  url?: string;
  key?: string;
  json?: boolean;
}

/** Progress of a long run, on stderr so that stdout stays the report (or the JSON document). */
export class Progress {
  private done = 0;
  private lastPrinted = 0;
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {}

  /** Runs of fewer items than this finish before progress would be worth reading. */
  static readonly THRESHOLD = 50;

  step(): void {
    this.done++;
    if (this.total < Progress.THRESHOLD) return;
    const now = Date.now();
    if (this.done !== this.total && this.done % 100 !== 0 && now - this.lastPrinted < 2000) return;
    this.lastPrinted = now;
    const line = `${this.label}: ${this.done}/${this.total}`;
    if (this.tty) process.stderr.write(`\r${line}${this.done === this.total ? "\n" : ""}`);
    else process.stderr.write(`${line}\n`);
  }
}

/**
 * One request outside the SDK (the examples routes), waiting out a 429 as the SDK does: for the seconds
 * Retry-After names (at most 65), announced, up to 10 times.
 */
export async function fetchWaitingOutLimits(input: string, init: RequestInit | (() => RequestInit)): Promise<Response> {
  const fetchAnnounced = announcingFetch();
  for (let attempt = 0; ; attempt++) {
    const res = await fetchAnnounced(input, typeof init === "function" ? init() : init);
    if (res.status !== 429 || attempt >= 10) return res;
    const seconds = Number(res.headers.get("retry-after") ?? "1");
    await res.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, Math.min(Number.isFinite(seconds) ? seconds : 1, 65) * 1000));
  }
}

function announcingFetch(): (input: string, init: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const res = await globalThis.fetch(input, init);
    if (res.status === 429) {
      const wait = res.headers.get("retry-after") ?? res.headers.get("x-ratelimit-reset") ?? "1";
      process.stderr.write(`rate limited by the server: waiting ${wait} s (Retry-After)\n`);
    }
    return res;
  };
}

/** A failure answer of the API: its status and the server's words. */
export class ApiError extends CliError {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly serverMessage: string,
  ) {
    super(`${method} ${path}: ${status} ${serverMessage}`);
  }
}

function remote(options: RemoteOptions): { baseUrl: string; apiKey: string } {
  const baseUrl = (options.url ?? process.env.PROMPTSTORE_URL ?? "").replace(/\/+$/, "");
  const apiKey = options.key ?? process.env.PROMPTSTORE_API_KEY ?? "";
  if (!baseUrl) throw new CliError("--url or PROMPTSTORE_URL is required: the server to talk to");
  if (!apiKey) throw new CliError("--key or PROMPTSTORE_API_KEY is required: the project's API key");
  return { baseUrl, apiKey };
}

/**
 * One request to the API outside the SDK, answered as it came (a body to stream, a status to decide on). A
 * broken connection is a CliError naming the server.
 */
export async function request(
  options: RemoteOptions,
  method: string,
  path: string,
  init: { body?: string | (() => ReadableStream<Uint8Array>); contentType?: string } = {},
): Promise<Response> {
  const { baseUrl, apiKey } = remote(options);
  const headers: Record<string, string> = { "x-api-key": apiKey };
  if (init.contentType !== undefined) headers["content-type"] = init.contentType;
  const body = init.body;
  try {
    // A stream is made again for each attempt (a 429 waited out sends the file again from its start), and sent
    // as it is read (Node's fetch needs to be told: `duplex`).
    return await fetchWaitingOutLimits(
      `${baseUrl}${path}`,
      () =>
        ({
          method,
          headers,
          ...(body === undefined ? {} : typeof body === "string" ? { body } : { body: body(), duplex: "half" }),
        }) as RequestInit,
    );
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    throw new CliError(`${method} ${path}: cannot reach ${baseUrl}: ${cause}`);
  }
}

/** The envelope's data, or an ApiError naming the call, the status and the server's words. */
export async function answerOf(response: Response, method: string, path: string): Promise<any> {
  let answer: { success?: boolean; data?: unknown; error?: string };
  try {
    answer = (await response.json()) as typeof answer;
  } catch {
    throw new ApiError(method, path, response.status, "(the answer is not JSON)");
  }
  if (!answer.success) throw new ApiError(method, path, response.status, answer.error ?? "");
  return answer.data;
}

/** One call to the API outside the SDK; a failure answer is a CliError naming the call and the field. */
export async function api(options: RemoteOptions, method: string, path: string, body?: unknown): Promise<any> {
  const response = await request(options, method, path, {
    ...(body === undefined ? {} : { body: JSON.stringify(body), contentType: "application/json" }),
  });
  return answerOf(response, method, path);
}

export function connect(options: RemoteOptions): Promptstore {
  const baseUrl = options.url ?? process.env.PROMPTSTORE_URL;
  const apiKey = options.key ?? process.env.PROMPTSTORE_API_KEY;
  if (!baseUrl) throw new CliError("--url or PROMPTSTORE_URL is required: the server to talk to");
  if (!apiKey) throw new CliError("--key or PROMPTSTORE_API_KEY is required: the project's API key");
  return new Promptstore({
    baseUrl,
    apiKey,
    mode: "none",
    timeoutMs: 30_000,
    // Enough to wait out a whole minute's window of the plan several times over; 5xx back off as usual.
    retries: 10,
    maxRetryAfterMs: 65_000,
    fetch: announcingFetch(),
  });
}

/** Every prompt on the server, by id, in the server's order (oldest first). */
export async function remotePrompts(client: Promptstore): Promise<Map<string, PromptListItem>> {
  const prompts = new Map<string, PromptListItem>();
  for await (const p of client.listAll()) prompts.set(p.id, p);
  return prompts;
}

/** The SDK's failures as one line naming what failed. */
export async function talking<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PromptstoreError) throw new CliError(error.message);
    throw error;
  }
}

export const short = (hash: string | null | undefined) => (hash ? shortHash(hash) : "none");
