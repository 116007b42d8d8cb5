import { describe, expect, it } from "vitest";
import { unplacedErrors } from "../src/api/errors";
import { type FormFieldList, missingFields, showsErrorsOf } from "../src/forms/FormFields";

type Values = { name: string; base_url: string; events: readonly string[]; remove_key: boolean; notes: string };

const FIELDS: FormFieldList<Values> = [
  { name: "name", label: "Name", required: true },
  { name: "base_url", label: "Base URL", type: "url", required: true },
  false,
  { kind: "choices", name: "events", label: "Events", options: [{ value: "a", label: "A" }] },
  { kind: "checkbox", name: "remove_key", label: "Remove the key" },
  { kind: "textarea", name: "notes", label: "Notes", rows: 2 },
];

const values = (changes: Partial<Values>): Values => ({
  name: "",
  base_url: "",
  events: [],
  remove_key: false,
  notes: "",
  ...changes,
});

describe("missingFields", () => {
  it("says `is required` of each required field left blank, in the order of the fields", () => {
    expect(missingFields(FIELDS, values({}))).toEqual([
      { field: "name", message: "is required" },
      { field: "base_url", message: "is required" },
    ]);
    // White space is blank; a field not required (notes) and choices left empty are not checked.
    expect(missingFields(FIELDS, values({ name: " OpenAI ", base_url: "  \n" }))).toEqual([
      { field: "base_url", message: "is required" },
    ]);
    expect(missingFields(FIELDS, values({ name: "OpenAI", base_url: "https://api.openai.com/v1" }))).toEqual([]);
  });
});

describe("showsErrorsOf", () => {
  const shows = showsErrorsOf(FIELDS);

  it("places an error beside the field it names, or anything inside it", () => {
    expect(["name", "base_url", "events", "events[3]", "notes", "notes.x"].filter(shows)).toEqual([
      "name",
      "base_url",
      "events",
      "events[3]",
      "notes",
      "notes.x",
    ]);
  });

  it("lists above the fields what no field shows: a checkbox, a field left out, another name", () => {
    expect(["remove_key", "names", "base", "models[0]", "body"].filter(shows)).toEqual([]);
    expect(
      unplacedErrors(
        [
          { field: "base_url", message: "must be an absolute http:// or https:// URL" },
          { field: "remove_key", message: "must be a boolean" },
          { field: null, message: "Could not reach the server." },
        ],
        shows,
      ),
    ).toEqual(["remove_key: must be a boolean", "Could not reach the server."]);
  });
});
