import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import { inTurn } from "../../service/loop-turns.js";
import type { ListPage } from "../../service/prompts/prompt-pages.js";
import { ok } from "../envelope.js";

/** The answers being sent, and how many bytes each has produced: what `/metrics` reports as the largest. */
export class AnswersInFlight {
  private readonly sizes = new Map<symbol, number>();

  begin(): { add(bytes: number): void; end(): void } {
    const id = Symbol();
    this.sizes.set(id, 0);
    return {
      add: (bytes) => {
        if (this.sizes.has(id)) this.sizes.set(id, (this.sizes.get(id) as number) + bytes);
      },
      end: () => this.sizes.delete(id),
    };
  }

  largest(): number {
    let max = 0;
    for (const size of this.sizes.values()) if (size > max) max = size;
    return max;
  }
}

const JSON_TYPE = "application/json; charset=utf-8";

/**
 * The success envelope of `data` split where its last member, an empty array, opens and closes: the head
 * and tail `sendPagesAsJson` puts the items between.
 */
export function envelopeAround(data: Record<string, unknown>): [head: string, tail: string] {
  const whole = JSON.stringify(ok(data));
  if (!whole.endsWith("[]}}")) throw new Error("the array must be the last member of the data");
  return [whole.slice(0, -3), whole.slice(-3)];
}

/**
 * Sends `{head}{item},{item},…{tail}`: the bytes `JSON.stringify` gives for an envelope whose last member is
 * the array of every item, when `head` ends with `[` and `tail` closes it. The first page is read before
 * anything is sent, so a fault there is the usual error answer; when it is the only page, the answer goes
 * out whole, exactly as before (with its Content-Length). Otherwise each page is one chunk, the next read
 * only once the client has taken the last (back-pressure: a slow reader holds one page, not the list). The
 * pages take turns of the event loop (service/loop-turns.ts), and so does each page's JSON, so the reads of
 * other clients go on while lists stream.
 *
 * A fault after the first chunk cannot change the status: the connection is closed, and the client sees a
 * truncated body, never a complete-looking one.
 */
export async function sendPagesAsJson<T>(
  reply: FastifyReply,
  head: string,
  pages: AsyncGenerator<ListPage<T>>,
  tail: string,
  inFlight?: AnswersInFlight,
): Promise<FastifyReply> {
  const first = await pages.next();
  const firstPage = first.done ? { items: [], last: true } : first.value;
  const opening = head + (await inTurn(() => joined(firstPage.items)));
  if (firstPage.last) {
    await pages.return(undefined);
    return reply.type(JSON_TYPE).send(opening + tail);
  }
  const size = inFlight?.begin();
  async function* chunks(): AsyncGenerator<string> {
    try {
      size?.add(Buffer.byteLength(opening));
      yield opening;
      for (;;) {
        const next = await pages.next();
        if (next.done) break;
        const { items, last } = next.value;
        if (items.length > 0) {
          const chunk = `,${await inTurn(() => joined(items))}`;
          size?.add(Buffer.byteLength(chunk));
          yield chunk;
        }
        if (last) break;
      }
      yield tail;
    } finally {
      size?.end();
      await pages.return(undefined);
    }
  }
  const stream = Readable.from(chunks(), { objectMode: false });
  // The generator's `finally` runs when the stream ends, fails, or is destroyed by a client that went away.
  stream.on("close", () => size?.end());
  return reply.type(JSON_TYPE).send(stream);
}

function joined(items: unknown[]): string {
  let out = "";
  for (let i = 0; i < items.length; i++) out += (i === 0 ? "" : ",") + JSON.stringify(items[i]);
  return out;
}
