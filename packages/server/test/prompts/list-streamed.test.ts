import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { ok } from "../../src/http/envelope.js";
import type { Caller } from "../../src/service/access.js";
import { DASHBOARD_PAGE_SIZE, LIST_PAGE_SIZE } from "../../src/service/prompts/prompt-pages.js";
import { type TestApp, useTestApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

/** Names and contents JSON escapes differently: quotes, backslashes, U+2028, a surrogate pair, control characters. */
const ODD = ['quote " and \\ backslash', "line\u2028separator", "emoji 😀 pair", "tab\there\nnewline", "plain"];

async function seed(t: TestApp, caller: Caller, from: number, to: number): Promise<void> {
  for (let n = from; n < to; n++) {
    const odd = ODD[n % ODD.length] as string;
    const created = await t.app.prompts.create(caller, {
      id: `p-${String(n).padStart(5, "0")}`,
      name: `${odd} ${n}`,
      description: n % 3 === 0 ? odd : "",
      sections: [
        { title: "Role", content: `Prompt ${n} for {{ company }} ${odd}` },
        { title: "Off", content: "{{ hidden }}", enabled: n % 2 === 0 },
      ],
      publish: n % 4 === 0,
    });
    // Labels besides production on some: the list's labels come from another table, page by page.
    if (n % 7 === 0) await t.app.prompts.publish(caller, created.id, created.version, { label: "staging" });
  }
}

/** The raw bytes of an answer over a real socket, with its headers. */
function fetchRaw(url: string, headers: Record<string, string>) {
  return new Promise<{ body: string; headers: Record<string, unknown>; status: number }>((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (part: Buffer) => parts.push(part));
      res.on("end", () =>
        resolve({ body: Buffer.concat(parts).toString("utf8"), headers: res.headers, status: res.statusCode ?? 0 }),
      );
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

describe.each(DATABASES)("unpaged lists, sent page by page ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_METRICS: true });

  it("are byte for byte the one-piece answer at every size around the page boundaries, REST and dashboard", async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    const project = (await t.request("GET", "/api/v2/prompts?limit=1")).body.data.project;
    const caller: Caller = {
      projectId: t.project.projectId,
      projectName: project.name,
      orgId: t.project.orgId,
      plan: "unlimited",
      actor: "test",
      access: "publish",
    };
    const editor = await member(t, "editor");
    // Every size where a page fills, or one more item starts the next, for both page sizes.
    const sizes = [0, 1, DASHBOARD_PAGE_SIZE, DASHBOARD_PAGE_SIZE + 1, LIST_PAGE_SIZE, LIST_PAGE_SIZE + 1];
    sizes.push(2 * LIST_PAGE_SIZE + 1);
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    let seeded = 0;
    for (const size of sizes) {
      await seed(t, caller, seeded, size);
      seeded = size;
      const rest = await t.app.server.inject({ url: "/api/v2/prompts", headers: { "x-api-key": t.key } });
      expect(rest.statusCode).toBe(200);
      const expected = JSON.stringify(ok(await t.app.prompts.list(caller)));
      expect(rest.body.length).toBe(expected.length);
      expect(rest.body === expected, `REST list of ${size}`).toBe(true);
      expect(JSON.parse(rest.body).data.prompts).toHaveLength(size);

      const dashboard = await t.app.server.inject({
        url: promptsUrl(t.project.projectId),
        headers: { cookie: `ps_session=${editor.cookie}` },
      });
      expect(dashboard.statusCode).toBe(200);
      const list = { project, role: "editor", prompts: await t.app.prompts.listWithVariables(caller) };
      const dashboardExpected = JSON.stringify(ok(list));
      expect(dashboard.body === dashboardExpected, `dashboard list of ${size}`).toBe(true);

      // Over a socket: one page goes out whole with its length, as before; more go out chunked.
      const raw = await fetchRaw(`${url}/api/v2/prompts`, { "x-api-key": t.key });
      expect(raw.body === expected).toBe(true);
      expect(raw.headers["content-type"]).toBe("application/json; charset=utf-8");
      if (size <= LIST_PAGE_SIZE) {
        expect(raw.headers["content-length"]).toBe(String(Buffer.byteLength(expected)));
        expect(raw.headers["transfer-encoding"]).toBeUndefined();
      } else {
        expect(raw.headers["transfer-encoding"]).toBe("chunked");
        expect(raw.headers["content-length"]).toBeUndefined();
      }
    }

    const metrics = (await t.app.server.inject({ url: "/metrics" })).body;
    // Every answer has ended: nothing is in flight.
    expect(metrics).toMatch(/^promptstore_largest_answer_in_flight_bytes 0$/m);
    const buckets = [...metrics.matchAll(/^promptstore_event_loop_delay_seconds_bucket\{le="([^"]+)"\}/gm)].map(
      (m) => m[1],
    );
    expect(buckets).toEqual([
      "0.001",
      "0.0025",
      "0.005",
      "0.01",
      "0.02",
      "0.05",
      "0.1",
      "0.25",
      "0.5",
      "1",
      "2.5",
      "+Inf",
    ]);
    // The sampler runs every 10 ms while the loop is free: a wait of 100 ms adds samples. (Counting them since the
    // start, "more than 10", failed once on a loaded machine, where the synchronous seeding on SQLite left 10.)
    const samples = (text: string) => Number(/^promptstore_event_loop_delay_seconds_count (\d+)$/m.exec(text)?.[1]);
    expect(samples(metrics)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const later = (await t.app.server.inject({ url: "/metrics" })).body;
    expect(samples(later)).toBeGreaterThan(samples(metrics));
  }, 240_000);
});
