import { createHash } from "node:crypto";
import canonicalizeModule from "canonicalize";
import type { Content, Section, SectionWithId } from "./content.js";

export function sha256Hex(data: string): string {
  return createHash("sha256").update(data, "utf8").digest("hex");
}

// The package is CommonJS (`module.exports = fn`) but its typings declare a default export.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

/** RFC 8785 canonical JSON: the bytes every content hash of ours covers (versions, dataset cases, checks). */
export function canonical(value: unknown): string {
  const json = canonicalize(value);
  if (json === undefined) throw new TypeError("content is not serializable as JSON");
  return json;
}

/**
 * The version hash: SHA-256 of the RFC 8785 canonical JSON of
 * `{"sections":[{"content","enabled","title"}…],"tools":[…]}`, with `"model":{…}` as well only when the
 * version has model settings, and `"includes":{reference: hash…}` only when it has includes, so every
 * version without them keeps the hash it always had. Documented in the README so that clients can compute
 * it offline; changing it would rename every stored version.
 */
export function contentHash(content: Content): string {
  const sections = content.sections.map((s) => ({ content: s.content, enabled: s.enabled, title: s.title }));
  const hashed: Record<string, unknown> = { sections, tools: content.tools };
  if (content.model !== undefined) hashed.model = content.model;
  if (content.includes !== undefined && Object.keys(content.includes).length > 0) hashed.includes = content.includes;
  return sha256Hex(canonical(hashed));
}

/**
 * Model settings as stored and read: their RFC 8785 canonical JSON, the very bytes the hash covers, so two
 * saves of the same settings written in another key order are one version that reads back one way.
 */
export function modelJson(model: NonNullable<Content["model"]>): string {
  return canonical(model);
}

/**
 * Section ids come from the section itself (and how many identical sections precede it), so an unchanged
 * section keeps its id from one version to the next and the same content always gets the same ids.
 */
export function withSectionIds(sections: readonly Section[]): SectionWithId[] {
  const occurrences = new Map<string, number>();
  return sections.map((s) => {
    const key = canonical({ content: s.content, enabled: s.enabled, title: s.title });
    const n = occurrences.get(key) ?? 0;
    occurrences.set(key, n + 1);
    return { id: `sec_${sha256Hex(`${key}#${n}`).slice(0, 12)}`, ...s };
  });
}
