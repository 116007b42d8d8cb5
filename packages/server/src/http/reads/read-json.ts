import type { PromptRead } from "../../service/prompts/prompt-reads.js";

const json = JSON.stringify;

/**
 * The response bodies of a read, spliced from the version's stored JSON instead of serializing a view:
 * byte for byte what `JSON.stringify(ok(view))` gives, keys in the order each surface has always sent
 * (test/prompts/version-documents.test.ts holds them to it).
 */
export function v2ReadJson(read: PromptRead): string {
  const { prompt, document } = read;
  return (
    `{"success":true,"data":{"id":${json(prompt.id)},"name":${json(prompt.name)},` +
    `"description":${json(prompt.description)},"prompt":${read.textJson},` +
    `"sections":${document.sectionsJson},"variables":${document.variablesJson},"version":${json(read.hash)},` +
    `"label":${json(read.label)},"production_version":${json(prompt.production_version)},` +
    `"created_at":${json(prompt.created_at)},"updated_at":${json(prompt.updated_at)}` +
    `${document.toolsJson === "[]" ? "" : `,"tools":${document.toolsJson}`}` +
    `${document.modelJson === null ? "" : `,"model":${document.modelJson}`}` +
    `${document.includesJson === null ? "" : `,"includes":${document.includesJson}`},"labels":${read.labelsJson}` +
    `${read.fallbackFor === undefined ? "" : `,"fallback_for":${json(read.fallbackFor)}`}` +
    `${read.rollout === undefined ? "" : `,"rollout":${json(read.rollout)}`}}}`
  );
}

/**
 * v1's frozen shape: the original fields, then the later additions; `tools` is `[]` when there are none.
 * Never remove, rename or reorder one.
 */
export function v1ReadJson(read: PromptRead): string {
  const { prompt, document } = read;
  return (
    `{"success":true,"data":{"id":${json(prompt.id)},"prompt":${read.textJson},` +
    `"sections":${document.sectionsJson},"tools":${document.toolsJson},"version":${json(read.hash)},` +
    `"created_at":${json(prompt.created_at)},"updated_at":${json(prompt.updated_at)},` +
    `"name":${json(prompt.name)},"description":${json(prompt.description)},` +
    `"variables":${document.variablesJson},"label":${json(read.label)},` +
    `"production_version":${json(prompt.production_version)}}}`
  );
}
