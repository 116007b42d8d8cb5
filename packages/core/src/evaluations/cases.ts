/**
 * A dataset's test cases (issue 38): what a case holds, its bounds, and how cases are named by
 * their content. A case is the RFC 8785 canonical JSON of `{ vars, messages?, expected?, tags? }`; its id is
 * the SHA-256 of those bytes, so a case unchanged from one dataset version to the next keeps its id. A dataset
 * version is the SHA-256 of the canonical JSON array of its cases, in order, computed one case at a time
 * (`DatasetHasher`), so a dataset of any size is hashed without being held whole.
 */
import { createHash, type Hash } from "node:crypto";
import { z } from "zod";
import { chatMessages, variableValues } from "../playground.js";
import { canonical, sha256Hex } from "../prompts/hash.js";
import { text } from "../text.js";
import { DATASET_LIMITS } from "./constants.js";

export { DATASET_LIMITS } from "./constants.js";

export const datasetCase = z
  .strictObject({
    vars: variableValues.optional(),
    messages: chatMessages.optional(),
    expected: text()
      .max(DATASET_LIMITS.expectedLength, `must be at most ${DATASET_LIMITS.expectedLength} characters`)
      .optional(),
    tags: z
      .array(
        text()
          .min(1, "must not be empty")
          .max(DATASET_LIMITS.tagLength, `must be at most ${DATASET_LIMITS.tagLength} characters`),
      )
      .max(DATASET_LIMITS.tagsPerCase, `must hold at most ${DATASET_LIMITS.tagsPerCase} tags`)
      .optional(),
  })
  .superRefine((value, ctx) => {
    const bytes = Buffer.byteLength(canonical(normalCase(value)), "utf8");
    if (bytes > DATASET_LIMITS.caseBytes) {
      ctx.addIssue({
        code: "custom",
        message: `is ${bytes} bytes as canonical JSON; a case holds at most ${DATASET_LIMITS.caseBytes}`,
      });
    }
  });

export type DatasetCase = z.infer<typeof datasetCase>;

/** The case as it is stored and hashed: `vars` always, the optional fields only when given (tags sorted). */
export interface NormalCase {
  vars: Record<string, string>;
  messages?: DatasetCase["messages"];
  expected?: string;
  tags?: string[];
}

/**
 * One form per meaning: no `vars` is `{}`, an empty tag list is none, and tags are a set (sorted, once each),
 * so that two ways of writing the same case are one case with one id.
 */
export function normalCase(value: DatasetCase): NormalCase {
  const out: NormalCase = { vars: value.vars ?? {} };
  if (value.messages !== undefined && value.messages.length > 0) out.messages = value.messages;
  if (value.expected !== undefined) out.expected = value.expected;
  if (value.tags !== undefined && value.tags.length > 0) out.tags = [...new Set(value.tags)].sort();
  return out;
}

/** The canonical JSON of a case: what is stored, exported and hashed. */
export function caseJson(value: NormalCase): string {
  return canonical(value);
}

/** A case's id: the SHA-256 of its canonical JSON. */
export function caseId(json: string): string {
  return sha256Hex(json);
}

/**
 * A dataset version's hash, one case at a time: the same as SHA-256 of the canonical JSON of the whole array
 * (`[` case `,` case … `]`; canonical JSON has no whitespace between elements).
 */
export class DatasetHasher {
  private readonly hash: Hash = createHash("sha256");
  private count = 0;

  add(json: string): void {
    this.hash.update(this.count === 0 ? "[" : ",", "utf8");
    this.hash.update(json, "utf8");
    this.count++;
  }

  get size(): number {
    return this.count;
  }

  digest(): string {
    if (this.count === 0) this.hash.update("[", "utf8");
    this.hash.update("]", "utf8");
    return this.hash.digest("hex");
  }
}

export const datasetName = text()
  .trim()
  .min(1, "must not be empty")
  .max(DATASET_LIMITS.nameLength, `must be at most ${DATASET_LIMITS.nameLength} characters`);
