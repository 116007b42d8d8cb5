/**
 * An instance holds a bounded number of unwritten cells, whatever the number of outcomes folded into them.
 * While its writes fail (the database away), what they took is given back; once full, a batch is answered
 * 503 and counted as dropped (docs/outcomes.md, "Storage").
 */
import { AppError } from "@promptstore/core/errors";
import { describe, expect, it } from "vitest";
import { OutcomeService } from "../../src/service/outcomes/outcome-service.js";
import { openStore } from "../../src/store/index.js";
import { LabelHistory } from "../../src/store/outcomes/label-history.js";
import { OutcomeReads } from "../../src/store/outcomes/outcome-reads.js";
import { OutcomeWrites } from "../../src/store/outcomes/outcome-writes.js";
import { unlimitedCaller, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { makePrompt, saveVersion } from "./outcome-support.js";

describe.each(DATABASES)("the outcome buffer ($name)", (database) => {
  const t = useTestApp(database);

  it("gives back what a failed write took, and once full answers 503 and counts the batch dropped", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const versions = [v1, await saveVersion(t, id, "Two."), await saveVersion(t, id, "Three.")];
    // The writes go to a connection to the same database that is closed: the database is away for them.
    const user = process.env.TEST_DATABASE_URL ? new URL(process.env.TEST_DATABASE_URL).username : "";
    const away = await openStore(t.store.location.replace("***", user));
    await away.close();
    const counted: Record<string, number> = {};
    const failures: unknown[] = [];
    const service = new OutcomeService(
      new OutcomeWrites(away.db),
      new OutcomeReads(t.store.db),
      new LabelHistory(t.store.db),
      t.app.bus,
      { retentionDays: 30, maxBuffered: 4 },
      {
        counted: (result, n) => {
          counted[result] = (counted[result] ?? 0) + n;
        },
        failed: (_what, error) => void failures.push(error),
      },
    );
    const caller = await unlimitedCaller(t);
    const batch = (version: string, n: number, at?: string) => ({
      outcomes: Array.from({ length: n }, () => ({ prompt: id, version, ok: true, ...(at ? { at } : {}) })),
    });
    try {
      // 500 outcomes of one series and minute are one cell.
      expect(await service.report(caller, batch(versions[0] as string, 500))).toEqual({ accepted: 500, refused: [] });
      // Half full (2 cells) writes at once: it fails, and what it took is held again.
      await service.report(caller, batch(versions[1] as string, 1));
      await service.flush();
      expect(failures.length).toBeGreaterThan(0);
      expect(service.pending).toBe(501);
      await service.report(caller, batch(versions[2] as string, 1));
      await service.report(caller, batch(versions[2] as string, 1, new Date(Date.now() - 5 * 60_000).toISOString()));
      await service.flush();
      expect(service.pending).toBe(503);
      // Full (4 cells): refused whole, counted as dropped; nothing of it held.
      const refused = await service.report(caller, batch(versions[0] as string, 7)).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).status).toBe(503);
      expect((refused as AppError).message).toMatch(
        /^outcomes: this server holds as many unwritten outcomes as it may/,
      );
      expect(counted).toEqual({ accepted: 503, dropped: 7 });
      // It tries to write at once; that fails too, and the 503 outcomes held are held still.
      await service.flush();
      expect(service.pending).toBe(503);
    } finally {
      await service.stop();
    }
  });
});
