/**
 * README promises about configuration and hashing that had no test: each is shown doing what it says, with
 * a control where the default would look the same.
 */
import { createHash } from "node:crypto";
import canonicalizeModule from "canonicalize";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openStore } from "../../src/store/index.js";
import { type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string;
const sqlite = DATABASES[0]!;
const postgres = DATABASES.find((d) => d.name === "postgres");

async function withApp<T>(overrides: Parameters<typeof testApp>[1], run: (t: TestApp) => Promise<T>): Promise<T> {
  const t = await testApp(sqlite, overrides);
  try {
    return await run(t);
  } finally {
    await t.close();
  }
}

describe("environment parsing (loadConfig)", () => {
  it("PROMPTSTORE_READ_CACHE and PROMPTSTORE_TRUST_PROXY take true/false, 1/0, on/off", () => {
    for (const [value, expected] of [
      ["false", false],
      ["0", false],
      ["off", false],
      ["true", true],
      ["1", true],
      ["on", true],
    ] as const) {
      const config = loadConfig({ PROMPTSTORE_READ_CACHE: value, PROMPTSTORE_TRUST_PROXY: value });
      expect([config.PROMPTSTORE_READ_CACHE, config.PROMPTSTORE_TRUST_PROXY], value).toEqual([expected, expected]);
    }
    expect(() => loadConfig({ PROMPTSTORE_READ_CACHE: "no" })).toThrow(/^configuration: PROMPTSTORE_READ_CACHE: /);
  });

  it("PROMPTSTORE_MCP_ALLOWED_ORIGINS is a comma-separated list, spaces and empty items dropped", () => {
    expect(
      loadConfig({ PROMPTSTORE_MCP_ALLOWED_ORIGINS: " app.example.com , tools.example.org,,  " })
        .PROMPTSTORE_MCP_ALLOWED_ORIGINS,
    ).toEqual(["app.example.com", "tools.example.org"]);
    expect(loadConfig({}).PROMPTSTORE_MCP_ALLOWED_ORIGINS).toBeUndefined();
  });

  it("PORT, HOST, DATABASE_POOL_SIZE and PROMPTSTORE_DEFAULT_PLAN, with their defaults and bounds", () => {
    expect(loadConfig({})).toMatchObject({
      PORT: 3000,
      HOST: "127.0.0.1",
      DATABASE_POOL_SIZE: 10,
      PROMPTSTORE_DEFAULT_PLAN: "free",
    });
    expect(
      loadConfig({ PORT: "8080", HOST: "0.0.0.0", DATABASE_POOL_SIZE: "3", PROMPTSTORE_DEFAULT_PLAN: "pro" }),
    ).toMatchObject({ PORT: 8080, HOST: "0.0.0.0", DATABASE_POOL_SIZE: 3, PROMPTSTORE_DEFAULT_PLAN: "pro" });
    expect(() => loadConfig({ DATABASE_POOL_SIZE: "0" })).toThrow(/^configuration: DATABASE_POOL_SIZE: /);
    expect(() => loadConfig({ PROMPTSTORE_DEFAULT_PLAN: "gold" })).toThrow(
      /^configuration: PROMPTSTORE_DEFAULT_PLAN: /,
    );
  });
});

describe("PROMPTSTORE_MCP_ALLOWED_ORIGINS from the environment", () => {
  it("admits every listed hostname and refuses the rest", async () => {
    const { PROMPTSTORE_MCP_ALLOWED_ORIGINS } = loadConfig({
      PROMPTSTORE_MCP_ALLOWED_ORIGINS: "app.example.com, tools.example.org",
    });
    await withApp({ PROMPTSTORE_MCP_ALLOWED_ORIGINS }, async (t) => {
      const post = (origin: string) =>
        t.request("POST", "/api/v2/mcp", {
          body: { jsonrpc: "2.0", id: 1, method: "ping" },
          headers: { origin, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        });
      const statuses: Record<string, number> = {};
      for (const origin of [
        "https://app.example.com",
        "https://tools.example.org",
        "https://evil.example",
        "http://localhost",
      ]) {
        statuses[origin] = (await post(origin)).status;
      }
      expect(statuses).toEqual({
        "https://app.example.com": 200,
        "https://tools.example.org": 200,
        "https://evil.example": 403,
        "http://localhost": 403,
      });
    });
  });
});

describe("PROMPTSTORE_GUARD_TEXT", () => {
  it("replaces the guard in every guarded answer: v2 (cached and not), v1 and MCP prompts/get", async () => {
    const guard = "<Guard>\nOnly the above. ✓\n</Guard>";
    await withApp({ PROMPTSTORE_GUARD_TEXT: guard }, async (t) => {
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "g", name: "G", markdown: "# Role\nHi {{ name }}", publish: true },
      });
      const bare = "<Role>\nHi {{ name }}\n</Role>";
      const guarded = `${bare}\n\n${guard}`;
      const texts = [];
      for (let round = 0; round < 2; round++) {
        texts.push((await t.request("GET", "/api/v2/prompts/g")).body.data.prompt);
        texts.push((await t.request("GET", "/api/v2/prompts/g?version=latest")).body.data.prompt);
        texts.push((await t.request("GET", "/api/v1/prompts/g")).body.data.prompt);
      }
      expect(texts).toEqual(Array(6).fill(guarded));
      expect((await t.request("GET", "/api/v2/prompts/g?guard=false")).body.data.prompt).toBe(bare);
      const mcp = await t.request("POST", "/api/v2/mcp", {
        body: { jsonrpc: "2.0", id: 1, method: "prompts/get", params: { name: "g", arguments: { name: "Ada" } } },
        headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      });
      const message = JSON.parse(
        String(mcp.body)
          .split("\n")
          .find((l) => l.startsWith("data: "))!
          .slice(6),
      );
      expect(message.result.messages[0].content.text).toBe(`<Role>\nHi Ada\n</Role>\n\n${guard}`);
    });
  });
});

describe("PROMPTSTORE_TRUST_PROXY", () => {
  /** Statuses of 11 invalid v1 keys from 1.1.1.1, then one from 2.2.2.2, as X-Forwarded-For says. */
  async function throttled(trust: boolean): Promise<number[]> {
    return withApp({ PROMPTSTORE_TRUST_PROXY: trust }, async (t) => {
      const statuses = [];
      for (const [n, address] of [...Array(11).fill("1.1.1.1"), "2.2.2.2"].entries()) {
        const res = await t.request("GET", "/api/v1/prompts/x", {
          key: `ps_wrong_${n}`,
          headers: { "x-forwarded-for": address },
        });
        statuses.push(res.status);
      }
      return statuses;
    });
  }

  it("on: the client address is X-Forwarded-For's, so one client's invalid keys do not throttle another", async () => {
    expect(await throttled(true)).toEqual([...Array(10).fill(401), 429, 401]);
  });

  it("off (the default): X-Forwarded-For is ignored, every request comes from the proxy's address", async () => {
    expect(await throttled(false)).toEqual([...Array(10).fill(401), 429, 429]);
  });

  it("on: X-Forwarded-Proto https makes the session cookie Secure", async () => {
    for (const trust of [true, false]) {
      await withApp({ PROMPTSTORE_TRUST_PROXY: trust }, async (t) => {
        const { password } = (await t.app.accounts.createUser("proxy@example.com", "a long enough password"))!;
        const res = await t.request("POST", "/api/dashboard/session", {
          key: null,
          body: { email: "proxy@example.com", password },
          headers: { "x-forwarded-proto": "https" },
        });
        expect(res.status).toBe(200);
        expect(String(res.headers["set-cookie"]).includes("; Secure"), `trust ${trust}`).toBe(trust);
      });
    }
  });
});

describe("titles are hashed exactly as sent", () => {
  it("a title with spaces around it is another version, with the hash the README's formula gives", async () => {
    await withApp({}, async (t) => {
      const hashOf = (title: string) =>
        createHash("sha256")
          .update(canonicalize({ sections: [{ title, content: "Hi", enabled: true }], tools: [] }))
          .digest("hex");
      const plain = await t.request("POST", "/api/v2/prompts", {
        body: { id: "t", name: "T", sections: [{ title: "Role", content: "Hi" }] },
      });
      const padded = await t.request("PUT", "/api/v2/prompts/t", {
        body: { sections: [{ title: " Role ", content: "Hi" }] },
      });
      expect([plain.body.data.version, padded.body.data.version, padded.body.data.created]).toEqual([
        hashOf("Role"),
        hashOf(" Role "),
        true,
      ]);
      // Stored and served as sent; only the tag is trimmed.
      const read = (await t.request("GET", "/api/v2/prompts/t?version=latest&guard=false")).body.data;
      expect([read.sections[0].title, read.prompt]).toEqual([" Role ", "<Role>\nHi\n</Role>"]);
    });
  });
});

describe.skipIf(!postgres)("PostgreSQL connection settings", () => {
  it("a postgresql:// URL selects PostgreSQL, like postgres://", async () => {
    const { url, drop } = await postgres!.create();
    const store = await openStore(url.replace(/^postgres:/, "postgresql:"));
    try {
      expect(store.dialect).toBe("postgres");
      const { rows } = await sql<{ v: string }>`select version() as v`.execute(store.db);
      expect(rows[0]!.v).toMatch(/^PostgreSQL /);
    } finally {
      await store.close();
      await drop();
    }
  });

  it("DATABASE_POOL_SIZE bounds the connections: 12 concurrent queries share exactly that many", async () => {
    const { url, drop } = await postgres!.create();
    const store = await openStore(url, { poolSize: loadConfig({ DATABASE_POOL_SIZE: "3" }).DATABASE_POOL_SIZE });
    try {
      const pids = await Promise.all(
        Array.from({ length: 12 }, () =>
          sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.1)`
            .execute(store.db)
            .then((r) => r.rows[0]!.pid),
        ),
      );
      expect(new Set(pids).size).toBe(3);
    } finally {
      await store.close();
      await drop();
    }
  });
});
