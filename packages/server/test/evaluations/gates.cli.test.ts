/**
 * The operator's `promptstore label set --required-evaluation FILE`: a requirement checked as the dashboard's
 * is, before the label takes it; `none` removes it; `--no-rollback-allowed`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DatasetService } from "../../src/service/evaluations/dataset-service.js";
import { DatasetStore } from "../../src/store/evaluations/datasets.js";
import { openStore } from "../../src/store/index.js";
import { cli, cliJson } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("label set with a required evaluation ($name)", (database) => {
  it("takes a requirement from a JSON file, refuses one that could never run, and removes it", async () => {
    const { url, drop } = await database.create();
    const dir = mkdtempSync(join(tmpdir(), "promptstore-gate-cli-"));
    try {
      const org = await cliJson(url, ["org", "create", "acme"]);
      const { project } = await cliJson(url, ["project", "create", org.id, "web"]);
      const connection = await cliJson(url, [
        "connection",
        "add",
        project.id,
        "--name",
        "Model",
        "--base-url",
        "https://models.example.com/v1",
        "--model",
        "m1",
        "--json",
      ]);
      const store = await openStore(url);
      let datasetId = "";
      try {
        const datasets = new DatasetService(new DatasetStore(store.db, store.operations), {
          maxCases: 1000,
          maxImportBytes: 1 << 20,
          examplesOf: async () => ({ examples: [] }),
        });
        const caller = {
          projectId: project.id,
          projectName: "web",
          orgId: org.id,
          plan: "free",
          actor: "cli",
          access: "publish" as const,
        };
        datasetId = (await datasets.create(caller, { name: "cases", cases: [{ vars: { n: "1" } }] })).id;
      } finally {
        await store.close();
      }
      const requirement = {
        dataset: datasetId,
        checks: [{ type: "contains", value: "ok" }],
        connection: connection.id,
        min_pass_rate: 0.9,
        no_regression: true,
      };
      const file = join(dir, "requirement.json");
      writeFileSync(file, JSON.stringify(requirement));
      const set = await cliJson(url, [
        "label",
        "set",
        project.id,
        "production",
        "--required-evaluation",
        file,
        "--json",
      ]);
      expect(set).toMatchObject({ name: "production", required_evaluation: requirement, rollback_allowed: true });
      const human = await cli(url, ["label", "set", project.id, "production", "--no-rollback-allowed"]);
      expect(human.stdout).toBe("production: not protected, fallback none, requires an evaluation (pass rate ≥ 0.9)\n");

      writeFileSync(file, JSON.stringify({ ...requirement, dataset: "ds_000000000000000000000000" }));
      const refused = await cli(url, ["label", "set", project.id, "staging", "--required-evaluation", file]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^error: required_evaluation\.dataset: /);
      writeFileSync(file, JSON.stringify({ ...requirement, min_pass_rate: 2 }));
      const invalid = await cli(url, ["label", "set", project.id, "staging", "--required-evaluation", file]);
      expect(invalid.stderr).toBe("error: required_evaluation.min_pass_rate: must be 0 to 1\n");

      const removed = await cliJson(url, [
        "label",
        "set",
        project.id,
        "production",
        "--required-evaluation",
        "none",
        "--json",
      ]);
      expect(removed).toMatchObject({ required_evaluation: null, rollback_allowed: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await drop();
    }
  });
});
