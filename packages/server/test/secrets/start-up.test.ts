import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { keyIdOf } from "../../src/secrets/secret-box.js";
import { BIN, cli, type RunningServer, startServer, TEST_SECRET_KEY, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const OTHER_KEY = "22".repeat(32);

/** `serve` that is expected to exit: its code and everything it wrote. */
function serveUntilExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c) => {
    output += c;
  });
  child.stderr.on("data", (c) => {
    output += c;
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, output })));
}

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop("SIGKILL");
  server = undefined;
});

describe("the secret key on the embedded default", () => {
  it("is generated on first start into a file beside the database, mode 0600, and reused after", async () => {
    const dir = mkdtempSync(join(tmpdir(), "promptstore-key-"));
    try {
      const db = join(dir, "store.sqlite");
      server = await startServer(db);
      const file = `${db}.key`;
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const key = readFileSync(file, "utf8").trim();
      expect(key).toMatch(/^[0-9a-f]{64}$/);
      const generated = server.events.find((e) => e.event === "secret_key_generated");
      expect(generated).toEqual({
        event: "secret_key_generated",
        file,
        key_id: keyIdOf(Buffer.from(key, "hex")),
      });
      expect(server.output().includes(key)).toBe(false);
      await server.stop("SIGTERM");

      server = await startServer(db);
      expect(server.events.map((e) => e.event)).toEqual(["listening"]);
      expect(readFileSync(file, "utf8").trim()).toBe(key);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(DATABASES)("the secret key at start-up ($name)", (database) => {
  const env = useBinaryDatabase(database);

  it("a wrong key fails start-up clearly, naming both key ids, and the right one starts", async () => {
    env.server = await startServer(env.url, { PROMPTSTORE_SECRET_KEY: TEST_SECRET_KEY });
    await env.server.stop("SIGTERM");
    env.server = undefined;
    const run = await serveUntilExit({ DATABASE_URL: env.url, PROMPTSTORE_SECRET_KEY: OTHER_KEY });
    expect(run.code).toBe(1);
    expect(run.output).toBe(
      `error: the secret key (key id ${keyIdOf(Buffer.from(OTHER_KEY, "hex"))}) is not the one this store's secrets ` +
        `were encrypted with (key id ${keyIdOf(Buffer.from(TEST_SECRET_KEY, "hex"))}): start with that key ` +
        "(PROMPTSTORE_SECRET_KEY, or the key file kept with the database); while changing keys, give the old one " +
        "in PROMPTSTORE_SECRET_KEY_PREVIOUS\n",
    );
    env.server = await startServer(env.url, { PROMPTSTORE_SECRET_KEY: TEST_SECRET_KEY });
    expect(env.server.events.at(-1)?.event).toBe("listening");
  });

  it("a new key starts with the old one given as previous, and from then on alone", async () => {
    env.server = await startServer(env.url, { PROMPTSTORE_SECRET_KEY: TEST_SECRET_KEY });
    await env.server.stop("SIGTERM");
    env.server = await startServer(env.url, {
      PROMPTSTORE_SECRET_KEY: OTHER_KEY,
      PROMPTSTORE_SECRET_KEY_PREVIOUS: TEST_SECRET_KEY,
    });
    await env.server.stop("SIGTERM");
    env.server = await startServer(env.url, { PROMPTSTORE_SECRET_KEY: OTHER_KEY });
    expect(env.server.events.at(-1)?.event).toBe("listening");
  });

  it("a malformed key fails start-up naming the variable", async () => {
    const run = await serveUntilExit({ DATABASE_URL: env.url, PROMPTSTORE_SECRET_KEY: "hunter2" });
    expect(run.code).toBe(1);
    expect(run.output).toBe(
      "error: PROMPTSTORE_SECRET_KEY: must be 32 random bytes written as 64 hex characters or as base64; " +
        "create one with `promptstore secret-key generate`\n",
    );
  });
});

describe.each(DATABASES.filter((d) => d.name === "postgres"))("the secret key on PostgreSQL ($name)", (database) => {
  const env = useBinaryDatabase(database);

  it("is required: without it start-up fails saying every instance needs the same one", async () => {
    const run = await serveUntilExit({ DATABASE_URL: env.url });
    expect(run.code).toBe(1);
    expect(run.output).toBe(
      "error: PROMPTSTORE_SECRET_KEY is not set: on PostgreSQL every instance must be given the same secret key, " +
        "which encrypts webhook signing secrets and model providers' API keys at rest; create one with " +
        "`promptstore secret-key generate` (docs/operations.md)\n",
    );
  });
});

describe("promptstore secret-key generate", () => {
  it("prints a fresh 64-hex key each time", async () => {
    const a = await cli(":memory:", ["secret-key", "generate"]);
    const b = await cli(":memory:", ["secret-key", "generate", "--json"]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    expect(JSON.parse(b.stdout).key).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(b.stdout).key).not.toBe(a.stdout.trim());
  });
});
