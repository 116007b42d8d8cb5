import { expect } from "vitest";
import type { TestApp } from "../support/app.js";

/** A prompt made (and published unless told) through the API; its id and first version. */
export async function makePrompt(
  t: Pick<TestApp, "request">,
  id: string,
  options: { publish?: boolean; key?: string; content?: string } = {},
): Promise<{ id: string; version: string }> {
  const res = await t.request("POST", "/api/v2/prompts", {
    body: {
      id,
      name: id,
      sections: [{ title: "Role", content: options.content ?? `You are ${id}.` }],
      publish: options.publish ?? true,
    },
    ...(options.key ? { key: options.key } : {}),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.data.id, version: res.body.data.version };
}

/** A new version of the prompt (not published); its hash. */
export async function saveVersion(t: Pick<TestApp, "request">, id: string, content: string): Promise<string> {
  const res = await t.request("PUT", `/api/v2/prompts/${id}`, { body: { sections: [{ title: "Role", content }] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.version;
}

export async function publish(
  t: Pick<TestApp, "request">,
  id: string,
  body: { version: string; label?: string; percent?: number },
): Promise<void> {
  const res = await t.request("POST", `/api/v2/prompts/${id}/publish`, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The value the histogram gives for a rank inside bucket `b` at `fraction` of it (docs/outcomes.md). */
export const inBucket = (b: number, fraction: number) => Math.round(2 ** ((b - 1 + fraction) / 8) * 10) / 10;
