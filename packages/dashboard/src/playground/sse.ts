/**
 * Server-Sent Events read from a fetch body. A run is a POST, which `EventSource` cannot send, so the
 * stream is parsed here as the HTML standard's "event stream interpretation" says: lines end in CRLF, LF or
 * CR; `data` lines join with LF; a blank line dispatches; a line starting with `:` is a comment. Pure, so it
 * is unit-tested with the chunk boundaries a network really produces (a line cut in two, a CRLF split).
 */
export interface StreamEvent {
  /** `message` when the server named none, as the standard says. */
  event: string;
  data: string;
  id: string | null;
}

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private id: string | null = null;
  // A chunk ending in CR may be the first half of a CRLF: its LF must not end a second, empty line.
  private pendingCr = false;

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): StreamEvent[] {
    let input = text;
    if (this.pendingCr && input.startsWith("\n")) input = input.slice(1);
    this.pendingCr = false;
    this.buffer += input;
    const events: StreamEvent[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      if (end === -1) break;
      const crlf = this.buffer.startsWith("\r\n", end);
      if (!crlf && this.buffer[end] === "\r" && end === this.buffer.length - 1) this.pendingCr = true;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (crlf ? 2 : 1));
      const dispatched = this.line(line);
      if (dispatched) events.push(dispatched);
    }
    return events;
  }

  private line(line: string): StreamEvent | null {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = "";
        return null;
      }
      const event = { event: this.event || "message", data: this.data.join("\n"), id: this.id };
      this.data = [];
      this.event = "";
      return event;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.id = value;
    return null;
  }
}

/** Every event of a response body, as it arrives; ends when the server ends the stream. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    finished = true;
    // An event the server did not end with a blank line is incomplete, and dropped, as the standard says.
    parser.push(decoder.decode());
  } finally {
    // A reader that stopped early (Stop, a component gone) closes the connection instead of draining it.
    if (!finished) reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
}
