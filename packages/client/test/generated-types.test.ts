/**
 * One source of truth for the client's types: src/generated/api-types.ts is generated from the OpenAPI
 * document the real server serves (itself built from the zod schemas the server validates with). Whatever
 * the document does not describe is held to the server's own types here.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type * as core from "@promptstore/core/events";
import { describe, expect, expectTypeOf, test } from "vitest";
import type { ProjectEvent, PromptEvent, PromptEventType, ReadyEvent, ResetEvent } from "../src/index.js";

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL("../scripts/generate-types.js", import.meta.url));
const GENERATED = fileURLToPath(new URL("../src/generated/api-types.ts", import.meta.url));

describe("generated API types", () => {
  test("src/generated/api-types.ts is exactly what the server's OpenAPI document generates (else: npm run generate)", async () => {
    const { stdout } = await run(process.execPath, [SCRIPT, "--stdout"], { maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toBe(readFileSync(GENERATED, "utf8"));
  });

  test("the change-event types are the server's (packages/core/src/events.ts)", () => {
    // `read` rides only on streams opened with include=read; the rest is the event webhooks deliver too.
    expectTypeOf<Omit<PromptEvent, "read">>().toEqualTypeOf<core.PromptEvent>();
    expectTypeOf<PromptEventType>().toEqualTypeOf<core.PromptEventType>();
    // The project's own events (label.requirement_changed): a type of their own, so PromptEvent stays as it was.
    expectTypeOf<ProjectEvent>().toEqualTypeOf<core.ProjectEvent>();
    expectTypeOf<PromptEventType | ProjectEvent["type"]>().toEqualTypeOf<core.EventType>();
    expectTypeOf<ReadyEvent>().toEqualTypeOf<core.ReadyEvent>();
    expectTypeOf<ResetEvent>().toEqualTypeOf<core.ResetEvent>();
  });
});
