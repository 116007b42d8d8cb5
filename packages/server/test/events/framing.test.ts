// The bytes of an event stream on the wire. Events and heartbeats are written to the socket as chunks framed
// once for every stream (routes/events.ts), past ServerResponse: whatever the path, every stream must read as
// well-formed HTTP, in order, on HTTP/1.1 (chunked), on HTTP/1.0 (unframed) and behind a pipelined request.
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { waitFor } from "../support/wait.js";

/** A connection that keeps every byte the server wrote. */
interface RawConnection {
  bytes(): Buffer;
  ended(): boolean;
  close(): void;
}

function connect(port: number, request: string): RawConnection {
  const socket = net.connect(port, "127.0.0.1");
  let buffer = Buffer.alloc(0);
  let ended = false;
  socket.on("data", (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
  });
  socket.on("end", () => {
    ended = true;
  });
  socket.on("error", () => {
    ended = true;
  });
  socket.write(request);
  return { bytes: () => buffer, ended: () => ended, close: () => socket.destroy() };
}

/** Splits off one response head: its status line, lower-cased headers, and what follows it. */
function head(bytes: Buffer): { status: string; headers: Record<string, string>; rest: Buffer } {
  const end = bytes.indexOf("\r\n\r\n");
  if (end === -1) throw new Error(`no complete head in ${JSON.stringify(bytes.toString())}`);
  const [status = "", ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, rest: bytes.subarray(end + 4) };
}

/**
 * Reads a chunked body strictly: every size line hex, every chunk exactly its size and followed by CRLF. A
 * chunk still arriving is left out. `last`: the zero-size chunk that ends the body was read.
 */
function chunks(body: Buffer): { chunks: string[]; last: boolean } {
  const out: string[] = [];
  let at = 0;
  for (;;) {
    const line = body.indexOf("\r\n", at);
    if (line === -1) return { chunks: out, last: false };
    const size = body.subarray(at, line).toString("latin1");
    if (!/^[0-9a-f]+$/.test(size)) throw new Error(`bad chunk size line ${JSON.stringify(size)} at ${at}`);
    const length = Number.parseInt(size, 16);
    const start = line + 2;
    if (body.length < start + length + 2) return { chunks: out, last: false };
    if (body.subarray(start + length, start + length + 2).toString() !== "\r\n") {
      throw new Error(`chunk at ${at} is not followed by CRLF`);
    }
    if (length === 0) {
      if (start + 2 !== body.length) throw new Error("bytes after the last chunk");
      return { chunks: out, last: true };
    }
    out.push(body.subarray(start, start + length).toString("utf8"));
    at = start + length + 2;
  }
}

/** What a chunk holds: `retry`, `heartbeat`, or the types of its events (a batch is one chunk). */
const kinds = (chunk: string): string[] =>
  chunk.startsWith("retry: ")
    ? ["retry"]
    : chunk === ": heartbeat\n\n"
      ? ["heartbeat"]
      : [...chunk.matchAll(/\nevent: (\S+)\n/g)].map((m) => m[1] as string);

const eventsRequest = (key: string, version = "1.1") =>
  `GET /api/v2/events HTTP/${version}\r\nhost: localhost\r\nx-api-key: ${key}\r\n\r\n`;

describe.each(DATABASES)("event stream bytes on the wire ($name)", (database) => {
  let t: TestApp;
  let port: number;
  const open: RawConnection[] = [];

  const stream = (request: string) => {
    const connection = connect(port, request);
    open.push(connection);
    return connection;
  };
  /** The stream's chunks so far, once its head has arrived. */
  const chunked = (connection: RawConnection) => {
    const bytes = connection.bytes();
    return bytes.includes("\r\n\r\n") ? chunks(head(bytes).rest).chunks : [];
  };

  beforeEach(async () => {
    t = await testApp(database, { PROMPTSTORE_EVENTS_HEARTBEAT_MS: 200 });
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    port = Number(new URL(url).port);
  });
  afterEach(async () => {
    for (const connection of open.splice(0)) connection.close();
    await t.close();
  });

  it("sends every event and heartbeat as one well-formed chunk, the same on every stream", async () => {
    const streams = [stream(eventsRequest(t.key)), stream(eventsRequest(t.key)), stream(eventsRequest(t.key))];
    await waitFor(() => streams.every((s) => chunked(s).some((c) => c.includes("event: ready"))));
    for (const s of streams) {
      const { status, headers } = head(s.bytes());
      expect(status).toBe("HTTP/1.1 200 OK");
      expect(headers["transfer-encoding"]).toBe("chunked");
      expect(headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    }

    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) });
    expect(created.status).toBe(201);
    await waitFor(() => streams.every((s) => chunked(s).some((c) => c.includes("event: prompt.created"))));
    // Heartbeats after the event, so that the event is not the last chunk read.
    await waitFor(() => streams.every((s) => chunked(s).filter((c) => c === ": heartbeat\n\n").length >= 2));

    const events = streams.map((s) => chunked(s).filter((c) => c.includes("event: prompt.created")));
    for (const found of events) {
      expect(found).toHaveLength(1);
      const [chunk = ""] = found;
      expect(chunk).toMatch(/^id: \d+\nevent: prompt\.created\ndata: \{.*\}\n\n$/);
      const data = JSON.parse(chunk.split("\ndata: ")[1] as string);
      expect(data).toMatchObject({ type: "prompt.created", prompt_id: "p", version: created.body.data.version });
    }
    expect(events[1]).toEqual(events[0]);
    expect(events[2]).toEqual(events[0]);
    for (const s of streams) {
      // Nothing but retry, ready, the event and heartbeats, in that order.
      const all = chunked(s);
      expect(all[0]).toBe("retry: 1000\n\n");
      expect(all[1]).toMatch(/^id: 0\nevent: ready\ndata: \{"last_event_id":0\}\n\n$/);
      expect(all.slice(2).filter((c) => c !== ": heartbeat\n\n")).toEqual(events[0]);
    }
  });

  it("sends an HTTP/1.0 client the events unframed", async () => {
    const s = stream(eventsRequest(t.key, "1.0"));
    await waitFor(() => s.bytes().includes("event: ready"));
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) });
    await waitFor(() => s.bytes().includes(": heartbeat\n\n", s.bytes().indexOf("event: prompt.created")));

    const { status, headers, rest } = head(s.bytes());
    expect(status).toBe("HTTP/1.1 200 OK");
    expect(headers["transfer-encoding"]).toBeUndefined();
    const body = rest.toString("utf8");
    expect(body).toMatch(
      /^retry: 1000\n\nid: 0\nevent: ready\ndata: \{"last_event_id":0\}\n\n(: heartbeat\n\n)*id: \d+\n/,
    );
    const blocks = body.split("\n\n").filter((b) => b !== "");
    expect(blocks.filter((b) => b.startsWith("id: ") && b.includes("event: prompt.created"))).toHaveLength(1);
    for (const block of blocks)
      expect(block).toMatch(/^(retry: 1000|: heartbeat|id: \d+\nevent: [a-z.]+\ndata: \{.*\})$/);
  });

  it("starts a stream asked for behind another request on the connection after that request's answer", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) });
    // Both requests in one write: the stream's answer waits for the read's, and no event may overtake it.
    const s = stream(
      `GET /api/v2/prompts/p HTTP/1.1\r\nhost: localhost\r\nx-api-key: ${t.key}\r\n\r\n${eventsRequest(t.key)}`,
    );
    await waitFor(() => s.bytes().includes("event: ready"));
    await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(2, { publish: true }) });
    await waitFor(() => s.bytes().includes("event: prompt.published"));
    await waitFor(() => s.bytes().includes(": heartbeat\n\n", s.bytes().indexOf("event: prompt.published")));

    const read = head(s.bytes());
    expect(read.status).toBe("HTTP/1.1 200 OK");
    const length = Number(read.headers["content-length"]);
    expect(JSON.parse(read.rest.subarray(0, length).toString()).data.id).toBe("p");
    const events = head(read.rest.subarray(length));
    expect(events.status).toBe("HTTP/1.1 200 OK");
    expect(events.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(
      chunks(events.rest)
        .chunks.flatMap(kinds)
        .filter((k) => k !== "heartbeat"),
    ).toEqual(["retry", "ready", "prompt.version_saved", "prompt.published"]);
  });

  it("holds a stream asked for behind another stream on the connection: nothing of it overtakes the first", async () => {
    // The second stream's answer waits, buffered, behind the first, which never ends: none of its bytes, heartbeat
    // or event, may reach the connection in the middle of the first one's body.
    const s = stream(`${eventsRequest(t.key)}${eventsRequest(t.key)}`);
    await waitFor(() => s.bytes().includes("event: ready"));
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) });
    await waitFor(() => s.bytes().includes("event: prompt.created"));
    await waitFor(() => s.bytes().includes(": heartbeat\n\n", s.bytes().indexOf("event: prompt.created")));
    // Time for the second stream's heartbeats and event too, had they gone out.
    await new Promise((r) => setTimeout(r, 500));

    const first = head(s.bytes());
    expect(first.status).toBe("HTTP/1.1 200 OK");
    expect(first.rest.includes("HTTP/1.1")).toBe(false);
    const read = chunks(first.rest).chunks;
    expect(read.flatMap(kinds).filter((k) => k !== "heartbeat")).toEqual(["retry", "ready", "prompt.created"]);
  });

  it("ends the body with the last chunk when the server shuts down", async () => {
    const s = stream(eventsRequest(t.key));
    await waitFor(() => s.bytes().includes("event: ready"));
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) });
    await waitFor(() => s.bytes().includes(": heartbeat\n\n", s.bytes().indexOf("event: prompt.created")));
    await t.app.server.close();
    await waitFor(() => s.ended());

    const { chunks: read, last } = chunks(head(s.bytes()).rest);
    expect(last).toBe(true);
    expect(read.flatMap(kinds).filter((k) => k !== "heartbeat")).toEqual(["retry", "ready", "prompt.created"]);
  });
});
