/**
 * Migration 024 starts the label history with what every label serves when it runs, as if it always had:
 * outcomes of a store that had prompts before it are placed at once.
 */
import { type Kysely, Migrator } from "kysely";
import { describe, expect, it } from "vitest";
import { migrate } from "../../src/store/index.js";
import { migrationProvider } from "../../src/store/migrations/index.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { makePrompt, publish, saveVersion } from "./outcome-support.js";

describe.each(DATABASES)("migration 024, outcomes ($name)", (database) => {
  const t = useTestApp(database);

  it("seeds the label history from what every label and rollout serves", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    await publish(t, id, { version: v2, percent: 20 });
    await publish(t, id, { version: v2, label: "staging" });
    await makePrompt(t, "draft", { publish: false });
    const db = t.store.db as unknown as Kysely<any>;
    const down = await new Migrator({ db, provider: migrationProvider }).migrateTo("023-label-gates");
    expect(down.error).toBeUndefined();
    await migrate(t.store.db);
    const rows = await t.store.db
      .selectFrom("label_history")
      .select(["prompt_id", "label", "at", "version", "candidate"])
      .orderBy("prompt_id")
      .orderBy("label")
      .execute();
    expect(rows).toEqual([
      { prompt_id: id, label: "production", at: "1970-01-01T00:00:00.000Z", version: v1, candidate: v2 },
      { prompt_id: id, label: "staging", at: "1970-01-01T00:00:00.000Z", version: v2, candidate: null },
    ]);
    const old = new Date(Date.now() - 86_400_000).toISOString();
    const res = await t.request("POST", "/api/v2/outcomes", {
      body: {
        outcomes: [
          { prompt: id, version: v1, label: "production", arm: "current", ok: true, at: old },
          { prompt: id, version: v2, label: "production", arm: "candidate", ok: true, at: old },
          { prompt: id, version: v2, label: "staging", ok: true, at: old },
          { prompt: id, version: v1, label: "staging", ok: true, at: old },
        ],
      },
    });
    expect(res.body.data.accepted).toBe(3);
    expect(res.body.data.refused.map((r: { field: string }) => r.field)).toEqual(["outcomes[3].label"]);
  });
});
