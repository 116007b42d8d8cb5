/**
 * docs/evaluations.md, "Sizes": a dataset is never held whole. The real binary runs with a V8 heap of 96 MB
 * (its own flags give 128) and takes a 160 MB JSONL import, then streams the version back out: holding
 * either whole would end the process out of memory. No timing is asserted.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const CASES = 10_000;
const FILLER = "lorem ipsum dolor sit amet ".repeat(600); // 16 200 characters

/** Case `i`, as its canonical JSON line (keys in order, nothing to escape). */
const line = (i: number) => `{"expected":"${i}","vars":{"n":"${i}","text":"${FILLER}"}}`;

describe.each(DATABASES)("a 160 MB dataset through a 96 MB heap ($name)", (database) => {
  const db = useBinaryDatabase(database);

  it("is imported from a stream and exported as one, byte for byte", { timeout: 300_000 }, async () => {
    db.server = await startServer(db.url, {
      NODE_OPTIONS: "--max-old-space-size=96",
      PROMPTSTORE_DEFAULT_PLAN: "unlimited",
      PROMPTSTORE_REQUEST_TIMEOUT_MS: "600000",
    });
    const key = db.server.events.find((e) => e.event === "bootstrap")?.key.key as string;
    const sent = createHash("sha256");
    const version = createHash("sha256");
    let bytes = 0;
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i === CASES) {
          version.update("]");
          controller.close();
          return;
        }
        const text = line(i);
        version.update(i === 0 ? "[" : ",").update(text);
        const chunk = Buffer.from(`${text}\n`, "utf8");
        sent.update(chunk);
        bytes += chunk.length;
        i++;
        controller.enqueue(chunk);
      },
    });
    const imported = await fetch(`${db.server.url}/api/v2/datasets/import?name=Big`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/x-ndjson" },
      body,
      duplex: "half",
    } as RequestInit);
    const answer = (await imported.json()) as { data: { id: string; version: string; cases: number } };
    expect(imported.status, JSON.stringify(answer)).toBe(201);
    expect(bytes).toBeGreaterThan(160_000_000);
    expect(answer.data).toMatchObject({ version: version.digest("hex"), cases: CASES });

    const exported = await fetch(`${db.server.url}/api/v2/datasets/${answer.data.id}/export`, {
      headers: { "x-api-key": key },
    });
    expect(exported.status).toBe(200);
    const received = createHash("sha256");
    let receivedBytes = 0;
    for await (const chunk of exported.body as unknown as AsyncIterable<Uint8Array>) {
      received.update(chunk);
      receivedBytes += chunk.length;
    }
    expect(receivedBytes).toBe(bytes);
    expect(received.digest("hex")).toBe(sent.digest("hex"));
    expect(db.server.process.exitCode).toBeNull();
  });
});
