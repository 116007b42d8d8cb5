import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const CSP =
  "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;font-src 'self';connect-src 'self';" +
  "object-src 'none';base-uri 'none';form-action 'self';frame-ancestors 'none'";
const HTML = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };

// Served files do not depend on the database; SQLite alone is enough.
const sqlite = DATABASES.filter((d) => d.name === "sqlite");

describe.each(sqlite)("the dashboard's files ($name)", (database) => {
  const t = useTestApp(database);

  it("serves the app at / with a CSP that allows only its own scripts and styles", async () => {
    expect(t.app.dashboardDir).toMatch(/packages\/dashboard\/dist$/);
    const res = await t.request("GET", "/", { key: null, headers: HTML });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["content-security-policy"]).toBe(CSP);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["x-frame-options"]).toBe("SAMEORIGIN");
    expect(res.headers["cache-control"]).toBe("no-cache");
    const html = String(res.body);
    expect(html).toContain('<div id="root"></div>');
    // Every script is a file of the app's own: nothing inline for the CSP to have to allow.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/assets\/[\w.-]+\.js"/);
      expect(body).toBe("");
    }
    expect(html).not.toMatch(/style="/);
  });

  it("gives the dashboard's API the same security headers as its pages", async () => {
    const res = await t.request("GET", "/api/dashboard/session", { key: null });
    expect(res.status).toBe(401);
    expect(res.headers["content-security-policy"]).toBe(CSP);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
  });

  it("caches hashed assets for good", async () => {
    const html = String((await t.request("GET", "/", { key: null, headers: HTML })).body);
    const asset = html.match(/src="(\/assets\/[\w.-]+\.js)"/)![1]!;
    const res = await t.request("GET", asset, { key: null });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/javascript; charset=utf-8");
    expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
  });

  it("answers a browser's deep link with the app, and a program's unknown path with the 404 envelope", async () => {
    const deep = await t.request("GET", "/p/proj_1/prompts/support-bot/history", { key: null, headers: HTML });
    expect(deep.status).toBe(200);
    expect(String(deep.body)).toContain('<div id="root"></div>');
    for (const [url, headers] of [
      ["/p/proj_1/prompts", {}],
      ["/api/dashboard/nothing", HTML],
      ["/missing.js", HTML],
    ] as const) {
      const res = await t.request("GET", url, { key: null, headers });
      expect(res.status, url).toBe(404);
      expect(res.body, url).toEqual({ success: false, error: `route not found: GET ${url}` });
    }
  });
});

describe.each(sqlite)("a dashboard rebuilt while the server runs ($name)", (database) => {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-dist-"));
  mkdirSync(join(dir, "assets"));
  writeFileSync(join(dir, "index.html"), '<div id="root"></div><script type="module" src="/assets/a.js"></script>');
  writeFileSync(join(dir, "assets", "a.js"), "export const a = 1;");
  const t = useTestApp(database, { PROMPTSTORE_DASHBOARD_DIR: dir });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves the new files without a restart", async () => {
    expect((await t.request("GET", "/assets/b.js", { key: null })).status).toBe(404);
    writeFileSync(join(dir, "assets", "b.js"), "export const b = 2;");
    const res = await t.request("GET", "/assets/b.js", { key: null });
    expect(res.status).toBe(200);
    expect(res.body).toBe("export const b = 2;");
  });
});

describe.each(sqlite)("a server without a built dashboard ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_DASHBOARD_DIR: "/nonexistent" });

  it("still serves the API, and / is a plain 404", async () => {
    expect(t.app.dashboardDir).toBeUndefined();
    expect((await t.request("GET", "/", { key: null, headers: HTML })).status).toBe(404);
    expect((await t.request("GET", "/api/v2/prompts")).status).toBe(200);
  });
});
