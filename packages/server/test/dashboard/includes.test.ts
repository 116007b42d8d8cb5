/**
 * Includes through a session (docs/dashboard-api.md, docs/includes.md): the dashboard reads both ends of the
 * graph and updates pins with the same service and answers as `/api/v2`; a viewer reads, and is refused an
 * update (403) by the service.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { includesOn, pinnedHash } from "../includes/includes-support.js";
import { useTestApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

const SUPPORT = [{ title: "S", content: "Rules: {{> safety}}" }];
const BILLING = [{ title: "B", content: "Also: {{> safety}}" }];

describe.each(DATABASES)("dashboard includes ($name)", (database) => {
  const t = useTestApp(database);
  const x = includesOn(t);
  let v1 = "";
  let s1 = "";
  let b1 = "";
  let url = "";
  beforeEach(async () => {
    await x.unlimited();
    v1 = await x.create("safety", [{ title: "R", content: "one" }]);
    s1 = await x.create("support", SUPPORT);
    b1 = await x.create("billing", BILLING);
    url = promptsUrl(t.project.projectId);
  });

  it("reads what a prompt includes and what includes it, as REST answers them", async () => {
    const viewer = await member(t, "viewer");
    const v2 = await x.save("safety", [{ title: "R", content: "two" }], { publish: true });
    const includes = await viewer.call("GET", `${url}/support/includes`);
    expect(includes.status).toBe(200);
    expect(includes.body).toEqual({
      success: true,
      data: {
        id: "support",
        version: s1,
        includes: [
          {
            include: "safety",
            prompt: "safety",
            section: null,
            pointer: "production",
            version: v1,
            current: v2,
            outdated: true,
          },
        ],
      },
    });
    expect(includes.body).toEqual((await x.call("GET", "/api/v2/prompts/support/includes")).body);
    const byVersion = await viewer.call("GET", `${url}/support/includes?version=${s1.slice(0, 7)}`);
    expect(byVersion.body.data.version).toBe(s1);
    const includedBy = await viewer.call("GET", `${url}/safety/included-by`);
    expect(includedBy.status).toBe(200);
    expect(includedBy.body).toEqual((await x.call("GET", "/api/v2/prompts/safety/included-by")).body);
    expect(
      includedBy.body.data.included_by.map((d: any) => [d.prompt, d.version, d.labels, d.pinned, d.outdated]),
    ).toEqual([
      ["billing", b1, ["production", "latest"], v1, true],
      ["support", s1, ["production", "latest"], v1, true],
    ]);
    const bad = await viewer.call("GET", `${url}/support/includes?version=Nope`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(
      "version: must be production, latest, a label, or 7-64 lowercase hex characters of a version hash",
    );
    const unknown = await viewer.call("GET", `${url}/nothing/included-by`);
    expect(unknown.status).toBe(404);
  });

  it("an editor updates chosen dependents in one action; a viewer is refused", async () => {
    const v2 = await x.save("safety", [{ title: "R", content: "two" }], { publish: true });
    const viewer = await member(t, "viewer");
    const refused = await viewer.call("POST", `${url}/safety/included-by/update`, { body: { publish: true } });
    expect(refused.status).toBe(403);
    expect((await viewer.call("POST", `${url}/support/update-includes`, { body: {} })).status).toBe(403);

    const editor = await member(t, "editor");
    const noCsrf = await editor.call("POST", `${url}/safety/included-by/update`, { body: {}, csrf: null });
    expect(noCsrf.status).toBe(403);
    const res = await editor.call("POST", `${url}/safety/included-by/update`, {
      body: { prompts: ["support", "billing"], publish: true },
    });
    expect(res.status).toBe(200);
    const s2 = pinnedHash(SUPPORT, { safety: v2 });
    const b2 = pinnedHash(BILLING, { safety: v2 });
    expect(res.body.data).toEqual({
      id: "safety",
      results: [
        {
          id: "support",
          from_version: s1,
          version: s2,
          created: true,
          updated: [{ include: "safety", from: v1, to: v2 }],
          outcome: "published",
          label: "production",
        },
        {
          id: "billing",
          from_version: b1,
          version: b2,
          created: true,
          updated: [{ include: "safety", from: v1, to: v2 }],
          outcome: "published",
          label: "production",
        },
      ],
    });
    expect((await x.read("support")).prompt).toBe("<S>\nRules: two\n</S>");
    const versions = (await editor.call("GET", `${url}/support/versions`)).body.data.versions;
    expect(versions[0]).toMatchObject({ version: s2, saved_by: `user:${editor.email}` });

    const one = await editor.call("POST", `${url}/support/update-includes`, { body: { only: ["Bad Id"] } });
    expect(one.status).toBe(400);
    expect(one.body.error).toBe(
      "only[0]: must be 1-64 characters of a-z, 0-9, _ or -, starting with a letter or digit",
    );
  });
});
