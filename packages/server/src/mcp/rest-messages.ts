import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { describeZodError } from "@promptstore/core/schemas";
import type { z } from "zod";

/**
 * A shared zod schema as the MCP SDK takes it, but validating through the same formatter as REST: a tool
 * rejects bad input with exactly the message the HTTP API gives (`sections[0].title: must not be blank`).
 * The JSON Schema the tool advertises is zod's own.
 */
export function withRestMessages<S extends z.ZodType>(schema: S): S & StandardSchemaWithJSON {
  const standard = schema["~standard"];
  const wrapped = Object.create(schema) as S;
  Object.defineProperty(wrapped, "~standard", {
    value: {
      ...standard,
      validate(value: unknown) {
        const result = schema.safeParse(value);
        return result.success
          ? { value: result.data }
          : { issues: [{ message: describeZodError(result.error, "arguments") }] };
      },
    },
  });
  return wrapped as S & StandardSchemaWithJSON;
}
