/**
 * docs/evaluations.md, "Import and export": JSONL and CSV files streamed into a version (replace or append, or
 * a new dataset), and a version streamed out as JSONL, byte for byte what an import of it takes back.
 */
import { Readable } from "node:stream";
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { canonicalJson, jsonl, manyCases, versionHash } from "./dataset-support.js";

/** A file sent in small pieces, as a slow client would, so that lines and records cross chunk boundaries. */
const chunked = (text: string, size = 997) =>
  Readable.from(
    (function* () {
      const bytes = Buffer.from(text, "utf8");
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
    })(),
  );

/** A CSV cell, quoted when it must be (RFC 4180). */
const cell = (value: string) => (/[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

describe.each(DATABASES)("dataset import and export ($name)", (database) => {
  const t = useTestApp(database);
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
  });

  const send = async (url: string, type: string, body: string | Readable) => {
    const res = await t.app.server.inject({
      method: "POST",
      url,
      headers: { "x-api-key": t.key, "content-type": type },
      payload: body,
    });
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };

  it("10 000 cases by a JSONL stream make a new dataset whose version is the hash of those cases", async () => {
    const cases = manyCases(10_000);
    const res = await send(
      "/api/v2/datasets/import?name=Ten%20thousand&description=from%20a%20file&message=first",
      "application/x-ndjson",
      chunked(jsonl(cases)),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toEqual({
      id: res.body.data.id,
      name: "Ten thousand",
      version: versionHash(cases),
      cases: 10_000,
    });
    const read = await t.request("GET", `/api/v2/datasets/${res.body.data.id}`);
    expect(read.body.data).toMatchObject({ description: "from a file", message: "first", cases: 10_000 });
    const page = await t.request("GET", `/api/v2/datasets/${res.body.data.id}/cases?after=9997`);
    expect(page.body.data.cases.map((c: { case: unknown }) => c.case)).toEqual(cases.slice(9998));
  });

  it("10 000 cases by CSV: columns are variables, expected, tags (|) and messages (JSON) are not", async () => {
    const cases = manyCases(10_000).map((c, i) =>
      i % 4 === 0 ? { ...c, messages: [{ role: "user", content: `line one\nline "two" of ${i}` }] } : c,
    );
    const header = "company,question,expected,tags,messages\n";
    const rows = cases.map((c) => {
      const v = c.vars as Record<string, string>;
      return [
        cell(v.company ?? ""),
        cell(v.question ?? ""),
        cell((c.expected as string | undefined) ?? ""),
        cell(((c.tags as string[] | undefined) ?? []).join(" | ")),
        cell(c.messages === undefined ? "" : JSON.stringify(c.messages)),
      ].join(",");
    });
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "CSV", cases: [] } });
    const res = await send(
      `/api/v2/datasets/${created.body.data.id}/import`,
      "text/csv; charset=utf-8",
      chunked(`\ufeff${header}${rows.join("\r\n")}\r\n`, 4093),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({
      id: created.body.data.id,
      version: versionHash(cases),
      created: true,
      cases: 10_000,
    });
  });

  it("an import with mode=append adds the file's cases after the head's; base guards it", async () => {
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "Grows", cases: manyCases(3) } });
    const { id, version } = created.body.data;
    const appended = await send(
      `/api/v2/datasets/${id}/import?mode=append&base=${version}&message=more`,
      "application/jsonl",
      jsonl(manyCases(2, 3)),
    );
    expect(appended.body.data).toEqual({ id, version: versionHash(manyCases(5)), created: true, cases: 5 });
    const stale = await send(`/api/v2/datasets/${id}/import?mode=append&base=${version}`, "application/jsonl", "");
    expect(stale.status).toBe(409);
    expect(stale.body.error).toBe(
      `base: the dataset changed since this edit began; its head is now ${appended.body.data.version}`,
    );
    // Blank lines, CRLF and a byte order mark are no cases.
    const replaced = await send(
      `/api/v2/datasets/${id}/import`,
      "application/x-ndjson",
      `\ufeff${canonicalJson(manyCases(1)[0])}\r\n\r\n   \n${canonicalJson(manyCases(1, 1)[0])}`,
    );
    expect(replaced.body.data).toEqual({ id, version: versionHash(manyCases(2)), created: true, cases: 2 });
  });

  it("export streams a version as JSONL, one canonical case a line; importing it back is the same version, byte for byte", async () => {
    const cases = manyCases(2_500).map((c, i) => (i === 7 ? { ...c, vars: { "é ü": "ünïcödé 😀", a: '"q"' } } : c));
    const created = await send("/api/v2/datasets/import?name=Round%20trip", "application/x-ndjson", jsonl(cases));
    const { id, version } = created.body.data;
    await t.request("PUT", `/api/v2/datasets/${id}`, { body: { cases: manyCases(1) } });
    const exported = await t.app.server.inject({
      method: "GET",
      url: `/api/v2/datasets/${id}/export?version=${version.slice(0, 9)}`,
      headers: { "x-api-key": t.key },
    });
    expect(exported.statusCode).toBe(200);
    expect(exported.headers["content-type"]).toBe("application/x-ndjson");
    expect(exported.headers["x-dataset-version"]).toBe(version);
    expect(exported.headers["x-dataset-cases"]).toBe("2500");
    expect(exported.body).toBe(jsonl(cases));

    const again = await send("/api/v2/datasets/import?name=Copy", "application/x-ndjson", exported.body);
    expect(again.body.data.version).toBe(version);
    const second = await t.app.server.inject({
      method: "GET",
      url: `/api/v2/datasets/${again.body.data.id}/export`,
      headers: { "x-api-key": t.key },
    });
    expect(second.rawPayload.equals(exported.rawPayload)).toBe(true);
  });

  it("from examples, exported: the examples as they are", async () => {
    await t.request("POST", "/api/v2/prompts", { body: { id: "bot", name: "Bot", markdown: "# A\n{{ who }}" } });
    await t.request("POST", "/api/v2/prompts/bot/examples", {
      body: {
        name: "One",
        variables: { who: "Ada" },
        messages: [{ role: "user", content: "Hi" }],
        good_answer: "Hi Ada",
      },
    });
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "Ex", from_examples: "bot" } });
    const exported = await t.app.server.inject({
      method: "GET",
      url: `/api/v2/datasets/${created.body.data.id}/export`,
      headers: { "x-api-key": t.key },
    });
    expect(exported.body).toBe(
      '{"expected":"Hi Ada","messages":[{"content":"Hi","role":"user"}],"vars":{"who":"Ada"}}\n',
    );
  });
});
