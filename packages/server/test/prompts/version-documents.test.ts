import { withGuard } from "@promptstore/core/prompts/assemble";
import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { beforeEach, describe, expect, it } from "vitest";
import { ok } from "../../src/http/envelope.js";
import { guardJson } from "../../src/service/prompts/version-document.js";
import { type TestProject, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const tools = [
  {
    type: "function",
    function: {
      name: "lookup_order",
      description: 'Find "an" order \u2028 é 😀',
      parameters: { type: "object", properties: { "2": { type: "string" }, "1": { type: "number" } }, required: ["1"] },
    },
  },
];

/** Content that exercises every rule the stored document must keep: escapes, disabled and repeated sections, tools. */
const bodies = {
  tricky: {
    name: 'Tricky "name" é',
    description: "tabs\tand \u0001 and </script>",
    sections: [
      { title: "Rôle & <x>", content: 'Quotes " backslash \\ ctrl \u0001 {{ a }} {{a}} {{ b.c }} 😀 \r\n' },
      { title: "Off", content: "{{ hidden }}", enabled: false },
      { title: "Role", content: "dup" },
      { title: "Role", content: "dup" },
    ],
    tools,
  },
  plain: { name: "Plain", sections: [{ title: "Role", content: "Help {{ company }}." }] },
  empty: { name: "Nothing enabled", sections: [{ title: "A", content: "{{ x }}", enabled: false }] },
};

const DOCUMENT_COLUMNS = ["text_json", "variables_json", "sections_json", "tools_json"] as const;

describe.each(DATABASES)("version documents ($name)", (database) => {
  // Cache off: every read below reaches the database and its stored document.
  const t = useTestApp(database, { PROMPTSTORE_READ_CACHE: false });
  let project: TestProject;
  beforeEach(async () => {
    project = await t.newProject({ plan: "unlimited" });
  });
  const get = async (url: string) => (await t.app.server.inject({ url, headers: { "x-api-key": project.key } })).body;

  /** Every read surface of every prompt, as raw bytes (v2 for each version reference and guard, v1) and as views. */
  async function readEverything(hashes: Record<string, string>) {
    const seen: Record<string, unknown> = {};
    for (const [id, hash] of Object.entries(hashes)) {
      for (const version of ["production", "latest", hash, hash.slice(0, 9)]) {
        for (const guard of ["true", "false"]) {
          const url = `/api/v2/prompts/${id}?version=${version}&guard=${guard}`;
          seen[url] = await get(url);
          seen[`view ${url}`] = await scopeRead(id, version, guard === "true");
        }
      }
      const v1 = `/api/v1/prompts/${id}`;
      seen[v1] = await get(v1);
    }
    return seen;
  }

  const scopeCaller = () => ({
    projectId: project.projectId,
    projectName: "",
    orgId: project.orgId,
    plan: "unlimited" as const,
    actor: "test",
    access: "publish" as const,
  });
  const scopeRead = (id: string, version: string, guard: boolean) =>
    t.app.prompts.read(scopeCaller(), id, { version, guard });

  /** The dashboard's list of the project, in one piece and page by page. */
  async function dashboardLists() {
    const caller = { ...scopeCaller(), projectName: "" };
    const paged = [];
    for await (const page of t.app.prompts.listWithVariablesPages(caller)) paged.push(...page.items);
    return { whole: await t.app.prompts.listWithVariables(caller), paged };
  }

  async function storedDocuments() {
    return t.store.db
      .selectFrom("versions")
      .select(["hash", ...DOCUMENT_COLUMNS])
      .where("project_id", "=", project.projectId)
      .orderBy("hash")
      .execute();
  }

  async function createAll(): Promise<Record<string, string>> {
    const hashes: Record<string, string> = {};
    for (const [id, body] of Object.entries(bodies)) {
      const res = await t.request("POST", "/api/v2/prompts", {
        body: { ...body, id, publish: true },
        key: project.key,
      });
      expect(res.status).toBe(201);
      hashes[id] = res.body.data.version;
    }
    return hashes;
  }

  it("a version saved before documents existed reads byte for byte as one saved after, and gets its document", async () => {
    const hashes = await createAll();
    const saved = await storedDocuments();
    expect(saved.every((row) => DOCUMENT_COLUMNS.every((c) => typeof row[c] === "string"))).toBe(true);
    const after = await readEverything(hashes);
    const listed = await dashboardLists();
    expect(listed.whole.map((p) => [p.id, p.variables])).toEqual([
      ["tricky", ["a", "b.c"]],
      ["plain", ["company"]],
      ["empty", []],
    ]);

    // What a database migrated from before 004 holds: versions without their document.
    await t.store.db
      .updateTable("versions")
      .set({ text_json: null, variables_json: null, sections_json: null, tools_json: null })
      .execute();
    // The dashboard's list reads the stored variables; without them, the served contents give the same.
    expect(await dashboardLists()).toEqual(listed);
    const before = await readEverything(hashes);
    expect(before).toEqual(after);
    // The first read stored each document, identical to what a save computes.
    expect(await storedDocuments()).toEqual(saved);
  });

  it("the spliced bytes are the serialized view: v2 as the dashboard and MCP get it, v1 in its frozen order", async () => {
    const hashes = await createAll();
    for (const [id, hash] of Object.entries(hashes)) {
      for (const version of ["production", hash]) {
        for (const guard of [true, false]) {
          const body = await get(`/api/v2/prompts/${id}?version=${version}&guard=${guard}`);
          expect(body).toBe(JSON.stringify(ok(await scopeRead(id, version, guard))));
        }
      }
      const view = await scopeRead(id, "production", true);
      expect(await get(`/api/v1/prompts/${id}`)).toBe(
        JSON.stringify(
          ok({
            id: view.id,
            prompt: view.prompt,
            sections: view.sections,
            tools: view.tools ?? [],
            version: view.version,
            created_at: view.created_at,
            updated_at: view.updated_at,
            name: view.name,
            description: view.description,
            variables: view.variables,
            label: view.label,
            production_version: view.production_version,
          }),
        ),
      );
    }
  });

  it("keeps the exact bytes reads have always had (key order included)", async () => {
    const created = await t.request("POST", "/api/v2/prompts", {
      key: project.key,
      body: {
        id: "exact",
        name: "Exact",
        sections: [
          { title: "Role", content: "Help {{ company }}." },
          { title: "Off", content: "{{ x }}", enabled: false },
        ],
        tools: [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object" } } }],
      },
    });
    const hash = "d503e3ebace348a12d16cfd2de7ae076e907018cea8c864d49255813dd14580d";
    const at = created.body.data.created_at;
    expect(created.body.data.version).toBe(hash);
    const sections =
      '[{"id":"sec_d155d31bfd9f","title":"Role","content":"Help {{ company }}.","enabled":true},' +
      '{"id":"sec_7039daa3e312","title":"Off","content":"{{ x }}","enabled":false}]';
    const tools = '[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}]';
    const text = "<Role>\nHelp {{ company }}.\n</Role>";
    expect(await get("/api/v2/prompts/exact?guard=false")).toBe(
      `{"success":true,"data":{"id":"exact","name":"Exact","description":"","prompt":${JSON.stringify(text)},` +
        `"sections":${sections},"variables":["company"],"version":"${hash}","label":"latest",` +
        `"production_version":null,"created_at":"${at}","updated_at":"${at}","tools":${tools},"labels":{}}}`,
    );
    // Labels (docs/releases.md) are the one addition, last; v1's frozen shape has none.
    expect(await get("/api/v1/prompts/exact")).toBe(
      `{"success":true,"data":{"id":"exact","prompt":${JSON.stringify(`${text}\n\n${DEFAULT_GUARD_TEXT}`)},` +
        `"sections":${sections},"tools":${tools},"version":"${hash}","created_at":"${at}","updated_at":"${at}",` +
        `"name":"Exact","description":"","variables":["company"],"label":"latest","production_version":null}}`,
    );
  });

  it("a read uses the stored document alone, not the section and tool rows", async () => {
    const hashes = await createAll();
    const stored = await readEverything(hashes);
    await t.store.db.deleteFrom("version_tools").execute();
    await t.store.db.deleteFrom("version_sections").execute();
    expect(await readEverything(hashes)).toEqual(stored);
  });
});

describe("guardJson", () => {
  it("gives exactly JSON.stringify(withGuard(text, guard)) from the text's JSON", () => {
    const texts = ["", "<A>\nx\n</A>", '<A>\n"quoted" \\ \u0001 \u2028 😀\n</A>', "😀", "\ud800"];
    const guards = [DEFAULT_GUARD_TEXT, 'Say "no" \\ \t \u0000 😀 \udc00', "x"];
    for (const guard of guards) {
      const append = guardJson(guard);
      for (const text of texts) {
        expect(append(JSON.stringify(text)), `${text} + ${guard}`).toBe(JSON.stringify(withGuard(text, guard)));
      }
    }
  });
});
