/**
 * Steady traffic against running instances while a fault happens, every answer recorded with when it was
 * asked and answered, so a test can check what was answered during the fault and after it.
 */

export interface Sample {
  instance: number;
  /** What was asked: `cached` (a prompt read before the fault), `list`, `save`, `health`. */
  kind: "cached" | "list" | "save" | "health";
  startedAt: number;
  endedAt: number;
  /** 0 when no answer came (the connection failed). */
  status: number;
  retryAfter: string | null;
  body: any;
  /** For a save: the number in the content it sent. */
  save?: number;
}

export interface Traffic {
  readonly samples: Sample[];
  /** The versions of `doc` that a save answered 200 for: acknowledged, so never to be lost. */
  readonly acknowledged: Set<string>;
  /** The numbers of the saves answered 200, and of those answered that they may have been saved. */
  readonly saved: Set<number>;
  readonly maybeSaved: Set<number>;
  stop(): Promise<void>;
}

/** Longer than the server's request timeout (30 s): a request that outlives it has hung. */
const CLIENT_TIMEOUT_MS = 40_000;

export function startTraffic(urls: string[], key: string, cachedId: string): Traffic {
  const samples: Sample[] = [];
  const acknowledged = new Set<string>();
  const saved = new Set<number>();
  const maybeSaved = new Set<number>();
  let running = true;
  let saves = 0;

  const ask = async (instance: number, kind: Sample["kind"], path: string, init: RequestInit = {}) => {
    const startedAt = Date.now();
    let status = 0;
    let retryAfter: string | null = null;
    let body: any;
    try {
      const res = await fetch(`${urls[instance]}${path}`, {
        ...init,
        headers: { "x-api-key": key, ...(init.body ? { "content-type": "application/json" } : {}) },
        signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
      });
      status = res.status;
      retryAfter = res.headers.get("retry-after");
      body = await res.json();
    } catch (error) {
      body = String(error);
    }
    const sample: Sample = { instance, kind, startedAt, endedAt: Date.now(), status, retryAfter, body };
    samples.push(sample);
    return sample;
  };

  const loop = async (pauseMs: number, step: () => Promise<unknown>) => {
    while (running) {
      await step();
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };

  const loops: Promise<void>[] = [];
  urls.forEach((_, instance) => {
    loops.push(loop(20, () => ask(instance, "cached", `/api/v2/prompts/${cachedId}`)));
    loops.push(loop(50, () => ask(instance, "list", "/api/v2/prompts")));
    loops.push(loop(50, () => ask(instance, "health", "/healthz")));
  });
  loops.push(
    loop(30, async () => {
      const n = saves++;
      const sample = await ask(n % urls.length, "save", "/api/v2/prompts/doc", {
        method: "PUT",
        body: JSON.stringify({ markdown: `# Body\nsave number ${n}` }),
      });
      sample.save = n;
      if (sample.status === 200) {
        acknowledged.add(sample.body.data.version);
        saved.add(n);
      } else if (/may have been saved/.test(String(sample.body?.error))) {
        maybeSaved.add(n);
      }
    }),
  );

  return {
    samples,
    acknowledged,
    saved,
    maybeSaved,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
