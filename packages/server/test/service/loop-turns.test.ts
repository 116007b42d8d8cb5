import { describe, expect, it, vi } from "vitest";
import { inTurn, LANE_MAX_MS, TURN_MS } from "../../src/service/loop-turns.js";

/** Holds the thread for longer than a turn's budget, as a piece of a heavy job may. */
function busy(ms = TURN_MS + 1): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
}

/** A heavy job of `pieces` pieces, each run in its turn; notes each piece in `log`. */
async function job(name: string, pieces: number, log: string[]): Promise<void> {
  for (let i = 0; i < pieces; i++) {
    await inTurn(() => {
      busy();
      log.push(`${name}${i}`);
    });
  }
}

describe("heavy work takes turns of the event loop", () => {
  it("a timer due while a job runs fires after the piece that spent the turn, not after the job", async () => {
    const log: string[] = [];
    const timer = new Promise<void>((resolve) => setTimeout(() => resolve(log.push("timer") as never), 0));
    await Promise.all([job("a", 6, log), timer]);
    // Each piece outlasts a turn, so the job waits for the next turn after each one; the timer fires in the first
    // wait (the timers phase comes before the next check phase).
    expect(log.indexOf("timer")).toBeLessThanOrEqual(2);
    expect(log.filter((entry) => entry !== "timer")).toEqual(["a0", "a1", "a2", "a3", "a4", "a5"]);
  });

  it("jobs waiting at once go one piece each per turn of the loop, in turn, however many there are", async () => {
    const log: string[] = [];
    // One tick per turn of the event loop: an immediate that sets the next one runs in the next loop's check phase.
    let ticking = true;
    const tick = () => {
      log.push("tick");
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    /** A piece that awaits, as one reading the database does, before holding the thread. */
    const awaitingJob = async (name: string) => {
      for (let i = 0; i < 3; i++) {
        await inTurn(async () => {
          await Promise.resolve();
          busy();
          log.push(`${name}${i}`);
        });
      }
    };
    await Promise.all([awaitingJob("a"), awaitingJob("b"), awaitingJob("c")]);
    ticking = false;
    expect(log.filter((entry) => entry !== "tick")).toEqual(["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"]);
    // Never two pieces in one turn: the loop turned (and took its I/O) between any two.
    const together = log.filter((entry, i) => entry !== "tick" && i > 0 && log[i - 1] !== "tick");
    expect(together, log.join(" ")).toEqual([]);
  });

  it("a request answered between two pieces: an I/O callback is not kept waiting for the whole job", async () => {
    const { createServer, request } = await import("node:http");
    const server = createServer((_, res) => res.end("read"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const log: string[] = [];
    const answered = new Promise<void>((resolve) => {
      request({ port, host: "127.0.0.1" }, (res) => {
        res.resume();
        res.on("end", () => {
          log.push("read");
          resolve();
        });
      }).end();
    });
    await Promise.all([job("a", 200, log), answered]);
    server.close();
    // The read's round trip takes a few turns of the loop; a job holding the loop would put it after a199.
    expect(log.indexOf("read")).toBeGreaterThan(-1);
    expect(log.indexOf("read")).toBeLessThan(100);
  });

  it("a piece holds the lane while it awaits I/O: the pieces of jobs running at once never overlap", async () => {
    const { createServer, request } = await import("node:http");
    // The database's answer as the poll phase brings it: the piece's rows arrive a few milliseconds after it asks.
    const database = createServer((_, res) => setTimeout(() => res.end("rows"), 2));
    await new Promise<void>((resolve) => database.listen(0, "127.0.0.1", resolve));
    const { port } = database.address() as { port: number };
    const query = () =>
      new Promise<void>((resolve) => {
        request({ port, host: "127.0.0.1", agent: false }, (res) => {
          res.resume();
          res.on("end", resolve);
        }).end();
      });
    const log: string[] = [];
    let inside = 0;
    let mostInside = 0;
    const awaitingJob = async (name: string) => {
      for (let i = 0; i < 4; i++) {
        await inTurn(async () => {
          inside++;
          mostInside = Math.max(mostInside, inside);
          log.push(`${name}${i}<`);
          await query();
          busy(1);
          log.push(`${name}${i}>`);
          inside--;
        });
      }
    };
    await Promise.all(["a", "b", "c", "d"].map(awaitingJob));
    database.close();
    expect(mostInside).toBe(1);
    // Each piece ends before the next begins, in turn: a0 b0 c0 d0 a1 …
    const expected = [0, 1, 2, 3].flatMap((i) => ["a", "b", "c", "d"].flatMap((n) => [`${n}${i}<`, `${n}${i}>`]));
    expect(log).toEqual(expected);
  });

  it("a piece that fails gives the lane back", async () => {
    await expect(
      inTurn(async () => {
        throw new Error("the database went away");
      }),
    ).rejects.toThrow("the database went away");
    expect(await inTurn(() => "next")).toBe("next");
  });

  it("a piece that never settles holds the lane for LANE_MAX_MS, not for ever", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      void inTurn(() => new Promise<never>(() => {}));
      let next = false;
      const waiting = inTurn(() => {
        next = true;
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(next).toBe(false);
      vi.advanceTimersByTime(LANE_MAX_MS);
      await waiting;
      expect(next).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
