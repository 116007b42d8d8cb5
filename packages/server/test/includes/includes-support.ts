import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import { expect } from "vitest";
import type { TestApp } from "../support/app.js";

/** A tester of includes on one app: the unlimited plan (many prompts), and short ways to write and read. */
export function includesOn(t: TestApp) {
  const call = async (method: string, url: string, body?: unknown, key?: string, headers?: Record<string, string>) =>
    t.request(method, url, {
      ...(body === undefined ? {} : { body }),
      ...(key ? { key } : {}),
      ...(headers ? { headers } : {}),
    });
  return {
    async unlimited() {
      await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    },
    /** Creates a prompt (published unless told) and returns its first version's hash. */
    async create(id: string, sections: { title: string; content: string; enabled?: boolean }[], publish = true) {
      const res = await call("POST", "/api/v2/prompts", { id, name: id, sections, publish });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data.version as string;
    },
    /** Saves a version (published when told) and returns its hash. */
    async save(id: string, sections: { title: string; content: string }[], extra: Record<string, unknown> = {}) {
      const res = await call("PUT", `/api/v2/prompts/${id}`, { sections, ...extra });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.version as string;
    },
    async read(id: string, query = "guard=false") {
      const res = await call("GET", `/api/v2/prompts/${id}?${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data;
    },
    call,
  };
}

/** The documented hash of written content with its pins (README, "How the version hash is computed"). */
export function pinnedHash(
  sections: { title: string; content: string; enabled?: boolean }[],
  includes: Record<string, string>,
): string {
  return sha256Hex(
    canonical({
      includes,
      sections: sections.map((s) => ({ content: s.content, enabled: s.enabled ?? true, title: s.title })),
      tools: [],
    }),
  );
}
