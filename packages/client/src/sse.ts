/**
 * A Server-Sent Events parser, as the HTML standard's "event stream interpretation" (in its section on
 * server-sent events) describes it: lines end
 * with CRLF, LF or CR (also when a CRLF is split between two chunks); `:` starts a comment; the fields are
 * `event`, `data` (several lines join with LF), `id` (ignored when it contains NUL; kept across events) and
 * `retry` (ASCII digits only); other fields are ignored; a blank line dispatches the event, unless it has no
 * data; what is pending at the end of the stream is discarded.
 */

export interface SseMessage {
  /** The `event` field, `message` when absent. */
  type: string;
  data: string;
  /** The last event ID when the event was dispatched (the last `id` field seen, not reset between events). */
  lastEventId: string;
}

export interface SseHandlers {
  onMessage(message: SseMessage): void;
  /** A `retry` field: the reconnection time the server asks for, in milliseconds. */
  onRetry?(ms: number): void;
  /** A comment line (`: heartbeat`), without its colon and one leading space. */
  onComment?(text: string): void;
}

/**
 * Parses an event stream fed as text, chunk by chunk, cut anywhere.
 *
 * @example
 * ```ts
 * import { SseParser } from "@promptstore/client";
 * const parser = new SseParser({ onMessage: (m) => console.log(m.type, m.data, m.lastEventId) });
 * parser.push("id: 42\r\nevent: prompt.published\r\ndata: {\"id\":42}\r\n");
 * parser.push("\r\n"); // logs: prompt.published {"id":42} 42
 * ```
 */
export class SseParser {
  private buffer = "";
  /** The previous chunk ended with CR: a LF that starts the next chunk belongs to that line ending. */
  private skipLeadingLf = false;
  private data = "";
  private hasData = false;
  private eventType = "";
  /** The last event ID buffer: survives dispatches, only an `id` field changes it. */
  lastEventId = "";

  constructor(private readonly handlers: SseHandlers) {}

  /**
   * Feeds decoded text; calls the handlers for every complete line and event.
   *
   * @example
   * ```ts
   * const parser = new SseParser({ onMessage: (m) => console.log(m.data) });
   * parser.push("data: one\ndata: tw");
   * parser.push("o\n\n"); // logs "one\ntwo"
   * ```
   */
  push(chunk: string): void {
    let text = chunk;
    if (this.skipLeadingLf) {
      if (text.startsWith("\n")) text = text.slice(1);
      if (text !== "") this.skipLeadingLf = false;
    }
    const input = this.buffer + text;
    // The buffer holds no line ending: the search starts where the new text does. Line endings are found with
    // indexOf, which scans natively: an event carrying a whole prompt is kilobytes on one line, and a loop over
    // its characters was the largest cost of a watching client receiving it.
    let start = 0;
    let cr = input.indexOf("\r", this.buffer.length);
    let lf = input.indexOf("\n", this.buffer.length);
    while (cr !== -1 || lf !== -1) {
      const atCr = cr !== -1 && (lf === -1 || cr < lf);
      const end = atCr ? cr : lf;
      this.line(input.slice(start, end));
      start = end + 1;
      if (atCr) {
        if (start < input.length) {
          if (input.charCodeAt(start) === 10) start++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      if (cr !== -1 && cr < start) cr = input.indexOf("\r", start);
      if (lf !== -1 && lf < start) lf = input.indexOf("\n", start);
    }
    this.buffer = input.slice(start);
  }

  /**
   * The stream ended: an incomplete line or event is discarded, as the standard says.
   *
   * @example
   * ```ts
   * const parser = new SseParser({ onMessage: (m) => console.log(m.data) });
   * parser.push("data: never dispatched\n");
   * parser.end(); // logs nothing
   * ```
   */
  end(): void {
    this.buffer = "";
    this.data = "";
    this.hasData = false;
    this.eventType = "";
    this.skipLeadingLf = false;
  }

  private line(line: string): void {
    if (line === "") {
      this.dispatch();
      return;
    }
    const colon = line.indexOf(":");
    if (colon === 0) {
      const text = line.slice(1);
      this.handlers.onComment?.(text.startsWith(" ") ? text.slice(1) : text);
      return;
    }
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.eventType = value;
        break;
      case "data":
        this.data += `${value}\n`;
        this.hasData = true;
        break;
      case "id":
        if (!value.includes("\u0000")) this.lastEventId = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) this.handlers.onRetry?.(Number.parseInt(value, 10));
        break;
      default:
        break;
    }
  }

  private dispatch(): void {
    const type = this.eventType === "" ? "message" : this.eventType;
    const { data, hasData } = this;
    this.data = "";
    this.hasData = false;
    this.eventType = "";
    if (!hasData) return;
    this.handlers.onMessage({ type, data: data.slice(0, -1), lastEventId: this.lastEventId });
  }
}

/**
 * Reads an event stream body (a `fetch` response's `body`) to its end, feeding the parser; resolves when the
 * stream ends, rejects when reading fails (the connection broke or the request was aborted).
 *
 * @example
 * ```ts
 * import { readEventStream, SseParser } from "@promptstore/client";
 * const res = await fetch("http://127.0.0.1:3000/api/v2/events", {
 *   headers: { "x-api-key": process.env.PROMPTSTORE_API_KEY, accept: "text/event-stream" },
 * });
 * await readEventStream(res.body!, new SseParser({ onMessage: (m) => console.log(m.type, m.data) }));
 * ```
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  parser: SseParser,
  /** Called for every chunk received, heartbeats included: a watchdog's way to know the connection lives. */
  onChunk?: () => void,
): Promise<void> {
  // UTF-8, with a leading BOM dropped, as the standard asks; invalid bytes become U+FFFD.
  const decoder = new TextDecoder("utf-8");
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onChunk?.();
      const text = decoder.decode(value, { stream: true });
      if (text !== "") parser.push(text);
    }
    const rest = decoder.decode();
    if (rest !== "") parser.push(rest);
  } finally {
    parser.end();
    reader.releaseLock();
  }
}
