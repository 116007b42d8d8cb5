import net from "node:net";

export interface RawResponse {
  status: number;
  statusText: string;
  /** Header names lower-cased; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  /** The body as text (chunked bodies de-chunked). */
  body: string;
  /** Interim (1xx) statuses that came before this answer. */
  interim: number[];
}

/**
 * Writes bytes on a fresh TCP connection and reads answers until `count` final ones have arrived, so a test
 * sees exactly what the server wrote (including what Node writes on its own, which an HTTP client would not
 * pass through unparsed). `closed` says whether the server then closed the connection.
 */
export function rawExchange(
  port: number,
  request: string | Buffer,
  count = 1,
  timeoutMs = 5_000,
): Promise<{ responses: RawResponse[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let buffer = Buffer.alloc(0);
    let settled = false;
    let closed = false;
    let responses: RawResponse[] = [];
    const timer = setTimeout(
      () => settle(new Error(`${responses.length} of ${count} answers within ${timeoutMs} ms: ${buffer}`)),
      timeoutMs,
    );
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve({ responses, closed });
    };
    const check = () => {
      try {
        responses = parseResponses(buffer, closed);
      } catch (error) {
        return settle(error as Error);
      }
      if (responses.length >= count) {
        // Give the server a moment to close (or not) after the last answer.
        if (closed) settle();
        else setTimeout(() => settle(), 100);
      } else if (closed) {
        settle(new Error(`connection closed after ${responses.length} of ${count} answers: ${buffer}`));
      }
    };
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      check();
    });
    const onEnd = () => {
      if (closed) return;
      closed = true;
      check();
    };
    socket.on("end", onEnd);
    socket.on("close", onEnd);
    // A server that answers and then resets the connection: keep what it wrote.
    socket.on("error", onEnd);
    socket.write(request);
  });
}

/** The first final answer on a fresh connection, with whether the connection was then closed. */
export async function rawRequest(
  port: number,
  request: string | Buffer,
  timeoutMs?: number,
): Promise<RawResponse & { closed: boolean }> {
  const { responses, closed } = await rawExchange(port, request, 1, timeoutMs);
  return { ...(responses[0] as RawResponse), closed };
}

/** The complete answers in `data`; the last may be cut short unless the connection has closed. */
export function parseResponses(data: Buffer, closed: boolean): RawResponse[] {
  const responses: RawResponse[] = [];
  let interim: number[] = [];
  let offset = 0;
  for (;;) {
    const end = data.indexOf("\r\n\r\n", offset);
    if (end < 0) return responses;
    const [statusLine = "", ...lines] = data.subarray(offset, end).toString("latin1").split("\r\n");
    const match = /^HTTP\/1\.1 (\d{3}) ?(.*)$/.exec(statusLine);
    if (!match) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine)}`);
    const status = Number(match[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const start = end + 4;
    if (status < 200) {
      interim.push(status);
      offset = start;
      continue;
    }
    let body: Buffer | undefined;
    let next = start;
    if (headers["content-length"] !== undefined) {
      const length = Number(headers["content-length"]);
      if (data.length >= start + length) {
        body = data.subarray(start, start + length);
        next = start + length;
      }
    } else if (headers["transfer-encoding"]?.includes("chunked")) {
      const chunked = dechunk(data, start);
      if (chunked) [body, next] = chunked;
    } else if (closed) {
      body = data.subarray(start);
      next = data.length;
    }
    if (body === undefined) return responses;
    responses.push({ status, statusText: match[2] ?? "", headers, body: body.toString("utf8"), interim });
    interim = [];
    offset = next;
  }
}

/** A complete chunked body from `offset` and where it ends, or undefined while the last chunk is missing. */
function dechunk(data: Buffer, offset: number): [Buffer, number] | undefined {
  const parts: Buffer[] = [];
  for (;;) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString("latin1"), 16);
    if (Number.isNaN(size)) return undefined;
    const start = lineEnd + 2;
    if (size === 0) return data.length >= start + 2 ? [Buffer.concat(parts), start + 2] : undefined;
    if (data.length < start + size + 2) return undefined;
    parts.push(data.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/** A request head (and optional body) from lines, with CRLFs. */
export function head(lines: string[], body = ""): string {
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}
