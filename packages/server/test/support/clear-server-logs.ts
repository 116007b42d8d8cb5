import { clearServerLogs } from "./server-logs.js";

/** vitest globalSetup: each run's logs are its own. */
export function setup(): void {
  clearServerLogs();
}
