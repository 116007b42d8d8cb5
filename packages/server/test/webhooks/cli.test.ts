import { EVENT_TYPES } from "@promptstore/core/events";
import { describe, expect, it } from "vitest";
import { resolveSecretKey } from "../../src/secrets/secret-key.js";
import { openStore } from "../../src/store/index.js";
import { cli, cliJson, secretKeyEnv, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const ALL = [...EVENT_TYPES];
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe.each(DATABASES)("promptstore webhook commands ($name)", (database) => {
  const db = useBinaryDatabase(database);
  const json = (...args: string[]) => cliJson(db.url, args);

  async function project(): Promise<{ id: string; key: string }> {
    await json("org", "create", "acme");
    const created = await json("project", "create", "acme", "Web app");
    return { id: created.project.id, key: created.key.key };
  }

  it("creates, lists, updates, rotates, shows deliveries and removes, with --json", { timeout: 90_000 }, async () => {
    const { id: projectId } = await project();
    const created = await json(
      "webhook",
      "create",
      "Web app",
      "--url",
      "https://hooks.example.com/a",
      "--description",
      "CI",
    );
    expect(created).toEqual({
      id: expect.stringMatching(/^whk_[0-9a-f]{24}$/),
      url: "https://hooks.example.com/a",
      description: "CI",
      events: ALL,
      enabled: true,
      created_at: expect.any(String),
      updated_at: created.created_at,
      secret_needs_rotation: false,
      secret: expect.stringMatching(SECRET),
    });
    const second = await json(
      "webhook",
      "create",
      projectId,
      "--url",
      "https://hooks.example.com/b",
      "--events",
      "prompt.published, prompt.created",
      "--disabled",
    );
    expect(second).toMatchObject({ events: ["prompt.published", "prompt.created"], enabled: false, description: "" });

    const { secret: _a, ...first } = created;
    const { secret: _b, ...other } = second;
    const listed = await json("webhook", "list", projectId);
    expect(listed).toEqual([first, other]);
    expect(JSON.stringify(listed)).not.toContain("whsec_");

    const updated = await json(
      "webhook",
      "update",
      second.id,
      "--enable",
      "--url",
      "https://hooks.example.com/c",
      "--events",
      "prompt.version_saved",
    );
    expect(updated).toEqual({
      ...other,
      url: "https://hooks.example.com/c",
      events: ["prompt.version_saved"],
      enabled: true,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // Another process, later: the update's own time, strictly after the creation's.
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(other.updated_at));
    const rotated = await json("webhook", "update", second.id, "--rotate-secret");
    expect(rotated.secret).toMatch(SECRET);
    expect(rotated.secret).not.toBe(second.secret);
    // The stored secret is the one printed, sealed with the store's key (the CLI opens it as serve does).
    const store = await openStore(db.url);
    try {
      const row = await store.db
        .selectFrom("webhook_endpoints")
        .select("secret")
        .where("id", "=", second.id)
        .executeTakeFirstOrThrow();
      expect(row.secret).toMatch(/^enc:v1:/);
      const { box } = resolveSecretKey(secretKeyEnv(db.url), store.dialect, db.url);
      expect(box.decrypt(row.secret, `webhook:${second.id}`)).toBe(rotated.secret);
    } finally {
      await store.close();
    }

    expect(await json("webhook", "deliveries", second.id)).toEqual([]);
    expect(await json("webhook", "remove", second.id)).toEqual({ id: second.id, removed: true });
    expect(await json("webhook", "list", projectId)).toEqual([first]);
  });

  it("lists deliveries a running server queued, with status, attempts and the last answer", async () => {
    const { id: projectId } = await project();
    const hook = await json(
      "webhook",
      "create",
      projectId,
      "--url",
      "https://hooks.invalid/x",
      "--events",
      "prompt.created",
    );
    const store = await openStore(db.url);
    try {
      const at = "2026-01-02T03:04:05.000Z";
      await store.db
        .insertInto("webhook_deliveries")
        .values({
          endpoint_id: hook.id,
          project_id: projectId,
          event_id: 7,
          event_type: "prompt.created",
          prompt_id: "support",
          payload: "{}",
          status: "pending",
          attempts: 2,
          next_attempt_at: "2026-01-02T03:06:05.000Z",
          last_attempt_at: "2026-01-02T03:05:05.000Z",
          first_attempt_at: at,
          last_response_code: 500,
          last_error: "HTTP 500: boom",
          created_at: at,
        })
        .execute();
    } finally {
      await store.close();
    }
    const listed = await json("webhook", "deliveries", hook.id, "--status", "pending");
    expect(listed).toEqual([
      {
        id: expect.any(Number),
        webhook_id: hook.id,
        event_id: 7,
        event_type: "prompt.created",
        prompt_id: "support",
        status: "pending",
        attempts: 2,
        next_attempt_at: "2026-01-02T03:06:05.000Z",
        last_attempt_at: "2026-01-02T03:05:05.000Z",
        last_response_code: 500,
        last_error: "HTTP 500: boom",
        created_at: "2026-01-02T03:04:05.000Z",
        delivered_at: null,
      },
    ]);
    expect(await json("webhook", "deliveries", hook.id, "--status", "delivered")).toEqual([]);
    const human = await cli(db.url, ["webhook", "deliveries", hook.id]);
    expect(human.stdout).toBe(
      `${listed[0].id}  pending    prompt.created support (event 7)  attempts 2  HTTP 500  next 2026-01-02T03:06:05.000Z  HTTP 500: boom\n`,
    );
  });

  it("prints the secret once in human output", async () => {
    await project();
    const created = await cli(db.url, ["webhook", "create", "Web app", "--url", "https://hooks.example.com/a"]);
    expect(created.code).toBe(0);
    const id = JSON.parse((await cli(db.url, ["webhook", "list", "Web app", "--json"])).stdout)[0].id;
    const secret = /: (whsec_[A-Za-z0-9+/]{43}=)\n$/.exec(created.stdout)?.[1];
    expect(created.stdout).toBe(
      `created webhook ${id}  enabled  https://hooks.example.com/a  ${EVENT_TYPES.join(",")}\nsigning secret (shown once, store it now): ${secret}\n`,
    );
    await cli(db.url, ["webhook", "create", "Web app", "--url", "https://hooks.example.com/b", "--disabled"]);
    const [, second] = JSON.parse((await cli(db.url, ["webhook", "list", "Web app", "--json"])).stdout);
    await cli(db.url, ["webhook", "update", second.id, "--description", "staging"]);
    const listed = await cli(db.url, ["webhook", "list", "Web app"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      `${id}  enabled  https://hooks.example.com/a  ${EVENT_TYPES.join(",")}\n` +
        `${second.id}  disabled  https://hooks.example.com/b  ${EVENT_TYPES.join(",")}  (staging)\n`,
    );
    expect(listed.stdout).not.toContain("whsec_");
  });

  // A dozen runs of the binary: more than the default time on a busy machine.
  it("fails with the field named, exit 1, as JSON with --json", { timeout: 90_000 }, async () => {
    await project();

    const failures: [string[], string][] = [
      [["webhook", "create", "Web app", "--url", "ftp://x.example.com"], "url: must be an http:// or https:// URL"],
      [
        ["webhook", "create", "Web app", "--url", "https://a:b@x.example.com"],
        "url: must not contain a user name or password",
      ],
      [
        ["webhook", "create", "Web app", "--url", "http://127.0.0.1/x"],
        "url: refused: 127.0.0.1, a loopback address; set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks",
      ],
      [
        ["webhook", "create", "Web app", "--url", "https://x.example.com", "--events", "prompt.renamed"],
        `events[0]: must be one of ${EVENT_TYPES.join(", ")}`,
      ],
      [["webhook", "create", "Nope", "--url", "https://x.example.com"], "project Nope not found"],
      [
        ["webhook", "update", "whk_000000000000000000000000", "--enable"],
        "webhook whk_000000000000000000000000 not found",
      ],
      [["webhook", "remove", "whk_000000000000000000000000"], "webhook whk_000000000000000000000000 not found"],
      [
        ["webhook", "update", "whk_000000000000000000000000"],
        "nothing to change: give --url, --events, --description, --enable, --disable or --rotate-secret",
      ],
      [
        ["webhook", "deliveries", "whk_000000000000000000000000", "--limit", "0"],
        "limit: must be a whole number from 1 to 100",
      ],
    ];
    for (const [args, error] of failures) {
      const res = await cli(db.url, [...args, "--json"]);
      expect({ code: res.code, stderr: res.stderr }, args.join(" ")).toEqual({
        code: 1,
        stderr: `${JSON.stringify({ error })}\n`,
      });
    }
    const human = await cli(db.url, ["webhook", "create", "Web app", "--url", "ftp://x.example.com"]);
    expect(human.stderr).toBe("error: url: must be an http:// or https:// URL\n");
  });
});
