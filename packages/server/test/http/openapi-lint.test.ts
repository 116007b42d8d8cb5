/**
 * The OpenAPI document as client generators meet it (issue 20): redocly's recommended rules at zero problems,
 * warnings included, and a stable, readable operationId on every operation, which generators
 * (openapi-generator, openapi-typescript, oapi-codegen) name their methods by.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { buildOpenApiDocument } from "../../src/http/openapi/openapi.js";

const run = promisify(execFile);
const REDOCLY = fileURLToPath(new URL("../../node_modules/.bin/redocly", import.meta.url));
const ROOT_REDOCLY = fileURLToPath(new URL("../../../../node_modules/.bin/redocly", import.meta.url));

type Doc = { info: { license?: unknown }; paths: Record<string, Record<string, { operationId?: string }>> };

describe("the OpenAPI document, linted", () => {
  const document = buildOpenApiDocument("0.1.0") as unknown as Doc;

  test("every operation has a unique camelCase operationId; info carries the license", () => {
    const ids = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => [`${method} ${path}`, op.operationId] as const),
    );
    expect(ids.length).toBeGreaterThanOrEqual(17);
    for (const [where, id] of ids) expect(id, where).toMatch(/^[a-z]+(?:[A-Z][a-z]+)+$/);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
    expect(document.info.license).toEqual({ name: "MIT", identifier: "MIT" });
  });

  test("redocly lint, recommended rules: no error and no warning", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "promptstore-openapi-"));
    try {
      const file = join(dir, "openapi.json");
      writeFileSync(file, JSON.stringify(document));
      const bin = existsSync(REDOCLY) ? REDOCLY : ROOT_REDOCLY;
      const { stdout } = await run(bin, ["lint", file, "--extends=recommended", "--format=json"], {
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
      const report = JSON.parse(stdout) as { totals: Record<string, number>; problems: unknown[] };
      expect(report.problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
