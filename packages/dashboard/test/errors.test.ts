import { createPromptBody, saveVersionBody, toolsInput } from "@promptstore/core/schemas";
import { describe, expect, it } from "vitest";
import { errorFor, errorWithin, parseFieldError, sectionField, unplacedErrors } from "../src/api/errors";
import { validate } from "../src/forms/validate";

describe("parseFieldError", () => {
  it("splits the field off the message", () => {
    expect(parseFieldError("sections[2].title: must not be blank")).toEqual({
      field: "sections[2].title",
      message: "must not be blank",
    });
    expect(parseFieldError("email: must be an e-mail address")).toEqual({
      field: "email",
      message: "must be an e-mail address",
    });
    expect(parseFieldError("tools[0].function.name: must be 1-64 characters")).toEqual({
      field: "tools[0].function.name",
      message: "must be 1-64 characters",
    });
    expect(parseFieldError("x-api-key: invalid API key")).toEqual({ field: "x-api-key", message: "invalid API key" });
  });

  it("keeps a colon inside the message", () => {
    expect(parseFieldError("id: already taken: choose another")).toEqual({
      field: "id",
      message: "already taken: choose another",
    });
  });

  it("does not take a sentence for a field", () => {
    expect(parseFieldError("Too many attempts: wait a minute")).toEqual({
      field: null,
      message: "Too many attempts: wait a minute",
    });
    expect(parseFieldError("wrong e-mail or password")).toEqual({ field: null, message: "wrong e-mail or password" });
    expect(parseFieldError("name:no space")).toEqual({ field: null, message: "name:no space" });
  });
});

describe("placing errors", () => {
  const errors = [
    { field: "name", message: "must not be empty" },
    { field: "tools[0].function.name", message: "bad" },
    { field: "publish", message: "odd" },
    { field: null, message: "plain" },
    { field: "body", message: "is invalid" },
  ];

  it("finds the error of a field, exactly or within it", () => {
    expect(errorFor(errors, "name")).toBe("must not be empty");
    expect(errorFor(errors, "tools")).toBeUndefined();
    expect(errorWithin(errors, "tools")).toEqual({ field: "tools[0].function.name", message: "bad" });
    expect(errorWithin(errors, "tool")).toBeUndefined();
  });

  it("lists what no input shows, naming the field", () => {
    expect(unplacedErrors(errors, (f) => f === "name" || f.startsWith("tools"))).toEqual([
      "publish: odd",
      "plain",
      "is invalid",
    ]);
  });

  it("reads section fields", () => {
    expect(sectionField("sections[2].title")).toEqual({ index: 2, part: "title" });
    expect(sectionField("sections[10]")).toEqual({ index: 10, part: null });
    expect(sectionField("sections")).toBeNull();
  });
});

describe("validate with the server's schemas", () => {
  it("names the section field like the server", () => {
    const result = validate(saveVersionBody, {
      sections: [
        { title: "A", content: "" },
        { title: "B", content: "" },
        { title: "  ", content: "" },
      ],
    });
    expect(result).toEqual({ ok: false, errors: [{ field: "sections[2].title", message: "must not be blank" }] });
  });

  it("reports every problem, not only the first", () => {
    const result = validate(createPromptBody, { name: " ", id: "Bad Id", sections: [] });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors.map((e) => e.field)).toEqual(["id", "name", "sections"]);
  });

  it("roots an array schema at the given name", () => {
    const result = validate(
      toolsInput,
      [{ type: "function", function: { name: "a b", parameters: { type: "object" } } }],
      "tools",
    );
    expect(result).toEqual({
      ok: false,
      errors: [{ field: "tools[0].function.name", message: "must be 1-64 characters of a-z, A-Z, 0-9, _ or -" }],
    });
  });

  it("passes the parsed data through", () => {
    expect(validate(createPromptBody, { name: " Bot ", markdown: "# A\nx" })).toEqual({
      ok: true,
      data: { name: "Bot", markdown: "# A\nx" },
    });
  });
});
