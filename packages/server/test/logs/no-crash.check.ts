/**
 * Runs after the whole suite (vitest.config.ts: its own group): no server process any test started left a
 * crash in its output. Tests that make a crash on purpose are none: a crash is always a bug.
 */
import { expect, it } from "vitest";
import { crashesInServerLogs } from "../support/server-logs.js";

it("server logs of the suite: no uncaughtException or unhandledRejection in any of them", () => {
  const { logs, crashes } = crashesInServerLogs();
  expect(crashes).toEqual([]);
  // The suite starts many servers: none kept would mean the check looked at nothing.
  expect(logs).toBeGreaterThan(0);
});
