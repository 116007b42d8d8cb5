/** One Server-Sent Event as received; comments (heartbeats) are kept as `{ comment }`. */
export interface ReceivedEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

export interface EventStreamReader {
  status: number;
  headers: Headers;
  /** The failure envelope when the stream was refused. */
  body?: any;
  received: ReceivedEvent[];
  /** Resolves with the first received event (from `from` on) that matches, or rejects after `timeoutMs`. */
  next(match: (event: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/**
 * Opens `GET /api/v2/events` with fetch and parses the stream as it arrives (a deliberately plain parser:
 * the tests check the server's framing, not a library's tolerance of it).
 */
export async function openEventStream(
  baseUrl: string,
  key: string,
  headers: Record<string, string> = {},
  query = "",
): Promise<EventStreamReader> {
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}/api/v2/events${query}`, {
    headers: { "x-api-key": key, ...headers },
    signal: abort.signal,
  });
  const received: ReceivedEvent[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  if (res.status !== 200) {
    return {
      status: res.status,
      headers: res.headers,
      body: await res.json(),
      received,
      next: () => Promise.reject(new Error(`stream refused with ${res.status}`)),
      ended: Promise.resolve(),
      close: () => {},
    };
  }
  let resolveEnded = () => {};
  const ended = new Promise<void>((resolve) => {
    resolveEnded = resolve;
  });
  (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
          const event: ReceivedEvent = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) event.comment = line.slice(1).trim();
            else if (line.startsWith("id: ")) event.id = line.slice(4);
            else if (line.startsWith("event: ")) event.event = line.slice(7);
            else if (line.startsWith("data: ")) event.data = line.slice(6);
          }
          if (event.event !== undefined || event.comment !== undefined) received.push(event);
          notify();
        }
      }
    } catch {
      // aborted by close()
    }
    resolveEnded();
    notify();
  })();
  let streamEnded = false;
  void ended.then(() => {
    streamEnded = true;
  });
  const next = (match: (event: ReceivedEvent) => boolean, timeoutMs = 5000) =>
    new Promise<ReceivedEvent>((resolve, reject) => {
      let index = 0;
      const check = () => {
        for (; index < received.length; index++) {
          const event = received[index] as ReceivedEvent;
          if (match(event)) {
            done();
            resolve(event);
            return;
          }
        }
        if (streamEnded) {
          done();
          reject(new Error(`stream ended; received ${JSON.stringify(received)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching event in ${timeoutMs} ms; received ${JSON.stringify(received)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return {
    status: res.status,
    headers: res.headers,
    received,
    next,
    ended,
    close: () => abort.abort(),
  };
}

/** The data of every received event that is a prompt change, parsed. */
export function changes(reader: EventStreamReader): any[] {
  return reader.received.filter((e) => e.event?.startsWith("prompt.")).map((e) => JSON.parse(e.data as string));
}
