import type { z } from "zod";

/**
 * One REST operation as the OpenAPI document describes it. Below the document and the route files alike:
 * the routes declare their operations, the document gathers them.
 */
export interface Operation {
  method: "get" | "post" | "put" | "patch" | "delete";
  path: string;
  /**
   * Stable and readable (`verbNoun`): generators name their methods by it, so it never changes once released.
   * test/http/openapi.test.ts holds every one to the pattern and to being unique.
   */
  operationId: string;
  summary: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  status: 200 | 201 | 202;
  /** What the success status means, when "Success" does not say enough. */
  statusDescription?: string;
  /** A second success status answering the same shape (an evaluation started is 202, one reused is 200). */
  alsoStatus?: { status: 200 | 201 | 202; description: string };
  response: z.ZodType;
  errors: number[];
  /** Answers with an ETag when a full hash is asked for, and 304 to a matching If-None-Match. */
  conditional?: true;
  /** What `{id}` names, when it is not a prompt. */
  idDescription?: string;
  /** The body may be left out. */
  bodyOptional?: true;
}
