import { describe, expect, test } from "vitest";
import { readEventStream, type SseMessage, SseParser } from "../src/index.js";

function parse(chunks: string[]): { messages: SseMessage[]; retries: number[]; comments: string[] } {
  const messages: SseMessage[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const parser = new SseParser({
    onMessage: (m) => messages.push(m),
    onRetry: (ms) => retries.push(ms),
    onComment: (text) => comments.push(text),
  });
  for (const chunk of chunks) parser.push(chunk);
  parser.end();
  return { messages, retries, comments };
}

/** Every way to cut `text` in two, and one character at a time: the result must never depend on the cuts. */
function everySplit(text: string): string[][] {
  const splits: string[][] = [[text], [...text]];
  for (let i = 1; i < text.length; i++) splits.push([text.slice(0, i), text.slice(i)]);
  return splits;
}

describe("SSE parser (HTML standard, event stream interpretation)", () => {
  test("the server's stream: retry, then ready, events with ids, heartbeat comments", () => {
    const stream =
      'retry: 1000\n\nid: 41\nevent: ready\ndata: {"last_event_id":41}\n\n: heartbeat\n\nid: 42\nevent: prompt.published\ndata: {"id":42}\n\n';
    for (const chunks of everySplit(stream)) {
      const { messages, retries, comments } = parse(chunks);
      expect(retries).toEqual([1000]);
      expect(comments).toEqual(["heartbeat"]);
      expect(messages).toEqual([
        { type: "ready", data: '{"last_event_id":41}', lastEventId: "41" },
        { type: "prompt.published", data: '{"id":42}', lastEventId: "42" },
      ]);
    }
  });

  test("CRLF, CR and LF line endings, mixed, even with CRLF split between chunks", () => {
    const stream = "data: a\r\ndata: b\r\rdata: c\n\r\ndata: d\r\n\r\n";
    for (const chunks of everySplit(stream)) {
      expect(parse(chunks).messages.map((m) => m.data)).toEqual(["a\nb", "c", "d"]);
    }
  });

  test("multi-line data joins with LF; an empty data line adds an empty line", () => {
    expect(parse(["data: one\ndata: two\ndata\ndata:\ndata: three\n\n"]).messages[0]?.data).toBe("one\ntwo\n\n\nthree");
    expect(parse(["data\n\n"]).messages).toEqual([{ type: "message", data: "", lastEventId: "" }]);
  });

  test("one leading space is removed from a value, no more; a field without colon has an empty value", () => {
    expect(parse(["data:  two spaces\n\n"]).messages[0]?.data).toBe(" two spaces");
    expect(parse(["data:no space\n\n"]).messages[0]?.data).toBe("no space");
    expect(parse(["event\ndata: x\n\n"]).messages[0]?.type).toBe("message");
    expect(parse(["data: a: b: c\n\n"]).messages[0]?.data).toBe("a: b: c");
  });

  test("an event without data is not dispatched, and its type does not leak into the next", () => {
    const { messages } = parse(["event: lonely\n\ndata: x\n\n", "event: typed\nid: 7\n\n", "data: y\n\n"]);
    expect(messages).toEqual([
      { type: "message", data: "x", lastEventId: "" },
      { type: "message", data: "y", lastEventId: "7" },
    ]);
  });

  test("the last event id persists across events; an empty id resets it; an id with NUL is ignored", () => {
    const { messages } = parse(["id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 5\n\nid: 6\u00007\ndata: d\n\n"]);
    expect(messages.map((m) => m.lastEventId)).toEqual(["1", "1", "", "5"]);
  });

  test("retry takes ASCII digits only; unknown fields and comments are ignored", () => {
    const { retries, messages, comments } = parse([
      "retry: 250\nretry: 1.5\nretry: abc\nretry: -1\nretry:3000\nfoo: bar\n:comment\n: spaced\ndata: x\n\n",
    ]);
    expect(retries).toEqual([250, 3000]);
    expect(comments).toEqual(["comment", "spaced"]);
    expect(messages).toEqual([{ type: "message", data: "x", lastEventId: "" }]);
  });

  test("field names are case-sensitive", () => {
    expect(parse(["Data: x\nDATA: y\n\n"]).messages).toEqual([]);
  });

  test("an event not closed by a blank line at the end of the stream is discarded", () => {
    expect(parse(["data: complete\n\ndata: incomplete\n"]).messages.map((m) => m.data)).toEqual(["complete"]);
    expect(parse(["data: no newline at all"]).messages).toEqual([]);
  });

  test("readEventStream decodes UTF-8 split inside a character, drops a leading BOM, and reports each chunk", async () => {
    const bytes = new TextEncoder().encode("\uFEFFdata: café ☕\n\nid: 9\ndata: 🚀\n\n");
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const messages: SseMessage[] = [];
    let chunks = 0;
    await readEventStream(body, new SseParser({ onMessage: (m) => messages.push(m) }), () => chunks++);
    expect(messages).toEqual([
      { type: "message", data: "café ☕", lastEventId: "" },
      { type: "message", data: "🚀", lastEventId: "9" },
    ]);
    expect(chunks).toBe(bytes.length);
  });

  test("readEventStream rejects when the body errors (a broken connection)", async () => {
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ === 0) controller.enqueue(new TextEncoder().encode("data: a\n\ndata: partial"));
        else controller.error(new Error("socket closed"));
      },
    });
    const messages: SseMessage[] = [];
    await expect(readEventStream(body, new SseParser({ onMessage: (m) => messages.push(m) }))).rejects.toThrow(
      "socket closed",
    );
    expect(messages.map((m) => m.data)).toEqual(["a"]);
  });
});
