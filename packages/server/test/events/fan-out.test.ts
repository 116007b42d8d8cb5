import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { grantToCaller } from "../../src/http/guards/auth.js";
import { EventHub, type StreamSink } from "../../src/service/events/event-hub.js";
import { TURN_MS } from "../../src/service/loop-turns.js";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { waitFor } from "../support/wait.js";

/** Holds the thread as a write to a socket does, here for longer than a turn's budget. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
}

describe.each(DATABASES)("a publish to many streams is written a piece at a time ($name)", (database) => {
  let t: TestApp;
  let hub: EventHub;

  beforeEach(async () => {
    t = await testApp(database);
    // A hub beside the app's, on its store and bus, with pieces of 2 streams: five streams make three pieces.
    hub = new EventHub(t.store.events, t.app.bus, { keyIsValid: async () => true, fanOutPiece: 2 });
  });
  /** The caller the events route makes of the project's key. */
  const keyCaller = async () => {
    const grant = await t.app.tenants.findGrant(t.key);
    if (!grant) throw new Error("the test project's key has no grant");
    return grantToCaller(grant);
  };
  afterEach(async () => {
    hub.closeAll();
    await t.close();
  });

  it("every stream gets every event once, in order, with a turn of the event loop between pieces", async () => {
    const caller = await keyCaller();
    /** Writes in the order they happened, and `tick` for each turn of the event loop. */
    const log: string[] = [];
    const texts: string[][] = [];
    const detachers: (() => void)[] = [];
    let slow = false;
    for (let i = 0; i < 5; i++) {
      const received: string[] = [];
      texts.push(received);
      const sink: StreamSink = {
        write(text) {
          received.push(String(text));
          log.push(`s${i}`);
          if (slow) busy(TURN_MS);
          return true;
        },
        end() {},
      };
      detachers.push(hub.open(caller, t.key, undefined, sink));
    }
    await waitFor(() => texts.every((r) => r.length === 1));
    expect(texts.map((r) => r[0])).toEqual(Array(5).fill('id: 0\nevent: ready\ndata: {"last_event_id":0}\n\n'));

    slow = true;
    log.length = 0;
    let ticking = true;
    const tick = () => {
      log.push("tick");
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
    await waitFor(() => texts.every((r) => r.length === 2));
    await t.request("POST", "/api/v2/prompts/p/publish", { body: { version: created.body.data.version } });
    await waitFor(() => texts.every((r) => r.length === 3));
    ticking = false;

    const events = texts.map((r) => r.slice(1).map((text) => text.match(/^id: (\d+)\nevent: ([\w.]+)\n/)?.slice(1)));
    for (const stream of events)
      expect(stream).toEqual([
        ["1", "prompt.created"],
        ["2", "prompt.published"],
      ]);
    // Each piece spends the turn's budget, so the next waits for the loop to turn: never more than a piece's two
    // writes without a tick between them.
    const runs = log
      .join(" ")
      .split("tick")
      .map((run) => run.trim().split(" ").filter(Boolean));
    expect(Math.max(...runs.map((run) => run.length))).toBe(2);
    expect(log.filter((entry) => entry !== "tick")).toEqual([
      "s0",
      "s1",
      "s2",
      "s3",
      "s4",
      "s0",
      "s1",
      "s2",
      "s3",
      "s4",
    ]);
  });

  it("a stream that leaves during a fan-out is not written to after", async () => {
    const caller = await keyCaller();
    const texts: string[][] = [];
    const detachers: (() => void)[] = [];
    for (let i = 0; i < 5; i++) {
      const received: string[] = [];
      texts.push(received);
      detachers.push(
        hub.open(caller, t.key, undefined, {
          write(text) {
            received.push(String(text));
            // The first stream's event write makes the last stream leave, two pieces before its turn.
            if (i === 0 && received.length === 2) detachers[4]?.();
            return true;
          },
          end() {},
        }),
      );
    }
    await waitFor(() => texts.every((r) => r.length === 1));
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
    await waitFor(() => texts.slice(0, 4).every((r) => r.length === 2));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(texts.map((r) => r.length)).toEqual([2, 2, 2, 2, 1]);
    expect(hub.size).toBe(4);
  });
});
