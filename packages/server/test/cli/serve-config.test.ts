/**
 * README promises about `promptstore serve` that only the real binary can show: PORT and HOST from the
 * environment, PROMPTSTORE_DEFAULT_PLAN for the organization made on an empty database (on SQLite too), and
 * the text printed on a first start, line for line.
 */
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, secretKeyEnv, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** Runs `promptstore serve` (no flags, human output) and resolves with its stdout once it listens. */
function serve(databaseUrl: string, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [BIN, "serve"], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent", ...secretKeyEnv(databaseUrl), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`did not start: ${out} ${err}`)), 20_000);
    child.stderr.on("data", (c) => {
      err += c;
    });
    child.stdout.on("data", (c) => {
      out += c;
      if (/Promptstore listening on .*\n/.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

describe("promptstore serve's environment (sqlite)", () => {
  const env = useBinaryDatabase(DATABASES[0]!);

  it("listens on PORT and HOST, prints the first-start text, and makes the organization on the free plan", async () => {
    const port = await freePort();
    // 127.0.0.2 is loopback too, but not 127.0.0.1: a server that ignored HOST would be found at the latter.
    const out = await serve(env.url, { PORT: String(port), HOST: "127.0.0.2" });
    const address = `http://127.0.0.2:${port}`;
    const key = /API key \(shown once, store it now\): (ps_\S+)/.exec(out)?.[1] ?? "";
    const password = /with the one-time password (\S+)/.exec(out)?.[1] ?? "";
    expect(out).toBe(
      [
        `Generated the server's secret key into ${env.url}.key (mode 0600). Keep it safe and apart from backups: ` +
          "without it, a restored store's webhook and model provider secrets cannot be read.",
        "",
        'Empty database: created organization "default" (plan free) and project "Default project".',
        `Dashboard: ${address}/`,
        `  sign in as owner@promptstore.local with the one-time password ${password}`,
        "  (shown once; you choose your own password at first sign-in)",
        `API key (shown once, store it now): ${key}`,
        "Try it:",
        `  curl -s -H "x-api-key: ${key}" ${address}/api/v2/prompts`,
        "Prompts in git, from your own repository (the promptstore command; PROMPTSTORE_URL, PROMPTSTORE_API_KEY):",
        `  npm install -g ${address}/sdk/promptstore-client.tgz && promptstore pull prompts/`,
        "The free plan allows 5 prompts per project and 60 requests a minute; lift it with: promptstore org set-plan default unlimited",
        "",
        `Promptstore listening on ${address} (sqlite: ${env.url}; rate limits: memory); dashboard at ${address}/`,
        "",
      ].join("\n"),
    );
    expect(key).toMatch(/^ps_[A-Za-z0-9_-]{43}$/);
    expect(password.length).toBeGreaterThanOrEqual(12);
    const res = await fetch(`${address}/api/v2/prompts`, { headers: { "x-api-key": key } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("60");
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it("a port in use says so and how to pick another (--port), before the first start's key is made and lost", async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
    const { port } = busy.address() as net.AddressInfo;
    try {
      const child = spawn(process.execPath, [BIN, "serve", "--port", String(port)], {
        env: { ...process.env, DATABASE_URL: env.url, LOG_LEVEL: "silent", ...secretKeyEnv(env.url) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      let err = "";
      child.stderr.on("data", (c) => {
        err += c;
      });
      const code = await new Promise((resolve) => child.once("exit", resolve));
      expect(code).toBe(1);
      expect(err).toBe(
        `error: port ${port} on 127.0.0.1 is already in use (EADDRINUSE): stop what listens there, or start on another port with --port N (npm start -- --port ${port + 1}) or PORT=N\n`,
      );
    } finally {
      await new Promise((r) => busy.close(r));
    }
    // The database was not bootstrapped by the failed start: the next one prints the key and the password.
    const out = await serve(env.url, { PORT: String(await freePort()) });
    expect(out).toMatch(/API key \(shown once, store it now\): ps_/);
  });

  it("PROMPTSTORE_DEFAULT_PLAN=pro makes the first organization pro: its first-start text and its limit say so", async () => {
    const port = await freePort();
    const out = await serve(env.url, { PORT: String(port), PROMPTSTORE_DEFAULT_PLAN: "pro" });
    expect(out).toContain('Empty database: created organization "default" (plan pro) and project "Default project".');
    expect(out).not.toContain("The free plan allows");
    const key = /API key \(shown once, store it now\): (ps_\S+)/.exec(out)?.[1] ?? "";
    const res = await fetch(`http://127.0.0.1:${port}/api/v2/prompts`, { headers: { "x-api-key": key } });
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
  });
});
