import { describe, expect, it } from "vitest";
import { readEvents, SseParser } from "../src/playground/sse";

describe("SseParser", () => {
  it("dispatches on a blank line, joins data lines with LF, and keeps the event name and id", () => {
    const parser = new SseParser();
    expect(parser.push("event: delta\nid: 7\ndata: one\ndata: two\n\n")).toEqual([
      { event: "delta", data: "one\ntwo", id: "7" },
    ]);
    // No event name: "message"; the last id carries over, as the standard says.
    expect(parser.push("data: x\n\n")).toEqual([{ event: "message", data: "x", id: "7" }]);
  });

  it("reads events cut anywhere by the network, CRLF split between chunks included", () => {
    const text = 'event: delta\r\ndata: {"a":1}\r\n\r\n: heartbeat\r\nevent: done\r\ndata: {}\r\n\r\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
      expect(events, `cut at ${cut}`).toEqual([
        { event: "delta", data: '{"a":1}', id: null },
        { event: "done", data: "{}", id: null },
      ]);
    }
  });

  it("takes a lone CR as a line end, ignores comments and unknown fields, and a field without a colon", () => {
    const parser = new SseParser();
    expect(parser.push(": hi\rretry: 10\rdata\rdata:  two spaces\r\r")).toEqual([
      { event: "message", data: "\n two spaces", id: null },
    ]);
  });

  it("drops a blank line with no data, and forgets its event name", () => {
    const parser = new SseParser();
    expect(parser.push("event: ping\n\ndata: after\n\n")).toEqual([{ event: "message", data: "after", id: null }]);
  });
});

describe("readEvents", () => {
  it("yields each event as its chunk arrives, decoding UTF-8 split between chunks, and drops an unfinished one", async () => {
    const bytes = new TextEncoder().encode("data: é☃\n\ndata: unfinished");
    // The é's two bytes in two chunks.
    const chunks = [bytes.slice(0, 7), bytes.slice(7)];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    const seen = [];
    for await (const event of readEvents(body)) seen.push(event);
    expect(seen).toEqual([{ event: "message", data: "é☃", id: null }]);
  });

  it("cancels the body when the reader stops early, so the connection is closed, not drained", async () => {
    let cancelled: unknown = "not cancelled";
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode("data: more\n\n"));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    for await (const event of readEvents(body)) {
      expect(event.data).toBe("more");
      break;
    }
    expect(cancelled).toBeUndefined();
  });
});
