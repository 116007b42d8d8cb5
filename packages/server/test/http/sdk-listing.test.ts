import { afterEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

/**
 * `/sdk/`'s install commands name the server: its configured public URL when set, never a Host header a
 * client chose; without one, the request's own host, as before.
 */
describe.each(DATABASES.slice(0, 1))("GET /sdk/ install commands ($name)", (database) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const listing = async (app: TestApp, host: string) => {
    const res = await app.app.server.inject({ method: "GET", url: "/sdk/", headers: { host } });
    expect(res.statusCode).toBe(200);
    return JSON.parse(res.body) as { clients: { file: string; url: string; install: string; latest_url?: string }[] };
  };

  it("are built from PROMPTSTORE_PUBLIC_URL when it is set, whatever the Host header says", async () => {
    t = await testApp(database, { PROMPTSTORE_PUBLIC_URL: "https://prompts.example.com" });
    const { clients } = await listing(t, "attacker.example:666");
    expect(clients.length).toBeGreaterThan(0);
    for (const client of clients) {
      expect(client.url).toBe(`https://prompts.example.com/sdk/${client.file}`);
      expect(client.install).toMatch(
        new RegExp(`^(npm|pip) install https://prompts\\.example\\.com/sdk/${client.file}$`),
      );
    }
    expect(clients.find((c) => c.latest_url)?.latest_url).toBe(
      "https://prompts.example.com/sdk/promptstore-client.tgz",
    );
    expect(JSON.stringify(clients)).not.toContain("attacker");
  });

  it("without it, follow the request's host", async () => {
    t = await testApp(database);
    const { clients } = await listing(t, "localhost:4000");
    expect(clients[0]?.url).toBe(`http://localhost:4000/sdk/${clients[0]?.file}`);
  });
});
