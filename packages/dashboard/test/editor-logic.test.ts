import { describe, expect, it } from "vitest";
import { checkModel, modelText } from "../src/editor/model-settings";
import { checkTools } from "../src/editor/tools";
import { moveItem } from "../src/forms/sections";
import { publishKind } from "../src/history/versions";
import { curlSnippet, fetchSnippet, installCommand, pythonSnippet, readUrl, sdkSnippet } from "../src/preview/snippets";

describe("checkTools", () => {
  it("accepts an empty text and an empty array as no tools", () => {
    expect(checkTools("")).toEqual({ ok: true, tools: [] });
    expect(checkTools(" [ ] ")).toEqual({ ok: true, tools: [] });
  });

  it("reports a parse error", () => {
    const result = checkTools("[{");
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error).toMatch(/^tools: not valid JSON: /);
  });

  it("reports the schema's message with the path of the field", () => {
    expect(
      checkTools(
        '[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},' +
          '{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}]',
      ),
    ).toEqual({
      ok: false,
      error: "tools[1].function.name: duplicates another tool's name",
    });
    expect(checkTools('{"type":"function"}')).toEqual({
      ok: false,
      error: "tools: must be an array, not an object",
    });
  });
});

describe("moveItem", () => {
  it("moves one item and leaves the rest in order", () => {
    expect(moveItem(["a", "b", "c"], 0, 1)).toEqual(["b", "a", "c"]);
    expect(moveItem(["a", "b", "c"], 2, 0)).toEqual(["c", "a", "b"]);
    expect(moveItem(["a", "b"], 1, 2)).toEqual(["a", "b"]);
    expect(moveItem(["a", "b"], -1, 0)).toEqual(["a", "b"]);
  });
});

describe("publishKind", () => {
  const versions = ["v4", "v3", "v2", "v1"].map((version) => ({
    version,
    message: null,
    created_at: "2025-01-01T00:00:00Z",
    saved_by: null,
    labels: {},
  }));

  it("publishes newer versions and rolls back to older ones", () => {
    expect(versions.map((v) => publishKind(versions, "v2", v.version))).toEqual([
      "publish",
      "publish",
      null,
      "rollback",
    ]);
  });

  it("publishes any version while nothing is in production", () => {
    expect(versions.map((v) => publishKind(versions, null, v.version))).toEqual([
      "publish",
      "publish",
      "publish",
      "publish",
    ]);
  });
});

describe("snippets", () => {
  const target = { origin: "https://prompts.example.com", promptId: "support-bot", version: "production", guard: true };

  it("leaves defaults out of the URL", () => {
    expect(readUrl(target)).toBe("https://prompts.example.com/api/v2/prompts/support-bot");
    expect(readUrl({ ...target, version: "abc1234", guard: false })).toBe(
      "https://prompts.example.com/api/v2/prompts/support-bot?version=abc1234&guard=false",
    );
  });

  it("reads the key from the environment", () => {
    expect(curlSnippet({ ...target, version: "latest" })).toBe(
      'curl -s "https://prompts.example.com/api/v2/prompts/support-bot?version=latest" \\\n' +
        '  -H "x-api-key: $PROMPTSTORE_API_KEY"',
    );
    const code = fetchSnippet(target, ["name"]);
    expect(code).toContain('fetch("https://prompts.example.com/api/v2/prompts/support-bot", {');
    expect(code).toContain('"x-api-key": process.env.PROMPTSTORE_API_KEY');
    expect(code).toContain('const values: Record<string, string> = { "name": "" };');
  });

  const files = [
    { language: "typescript", version: "0.1.0", file: "promptstore-client-0.1.0.tgz" },
    { language: "python", version: "0.1.0", file: "promptstore-0.1.0-py3-none-any.whl" },
  ];

  it("installs the clients from the server the page is on, else from a clone", () => {
    expect(installCommand(target.origin, files, "typescript")).toBe(
      "npm install https://prompts.example.com/sdk/promptstore-client-0.1.0.tgz",
    );
    expect(installCommand(target.origin, files, "python")).toBe(
      "pip install https://prompts.example.com/sdk/promptstore-0.1.0-py3-none-any.whl",
    );
    expect(installCommand(target.origin, [], "typescript")).toBe("npm install <clone>/packages/client");
    expect(installCommand(target.origin, [], "python")).toBe("pip install <clone>/clients/python");
  });

  it("reads with the SDKs: this version, the guard as shown, the variables to fill", () => {
    const ts = sdkSnippet({ ...target, version: "abc1234", guard: false }, ["company"], files);
    expect(ts.split("\n")[0]).toBe("// npm install https://prompts.example.com/sdk/promptstore-client-0.1.0.tgz");
    expect(ts).toContain('baseUrl: "https://prompts.example.com",');
    expect(ts).toContain('await promptstore.get("support-bot", { version: "abc1234", guard: false });');
    expect(ts).toContain('promptstore.fill(prompt, { "company": "" })');
    const py = pythonSnippet(target, [], files);
    expect(py.split("\n")[0]).toBe("# pip install https://prompts.example.com/sdk/promptstore-0.1.0-py3-none-any.whl");
    expect(py).toContain('prompt = promptstore.get("support-bot")  # then from memory');
    expect(pythonSnippet({ ...target, guard: false }, ["x"], files)).toContain(
      'promptstore.get("support-bot", guard=False)',
    );
  });
});

describe("checkModel", () => {
  it("takes empty text as no settings, and shows none as empty", () => {
    expect(checkModel("  ")).toEqual({ ok: true, model: undefined });
    expect(modelText(undefined)).toBe("");
  });

  it("parses and checks with the server's schema, naming fields as the API does", () => {
    expect(checkModel('{"name":"gpt-4o","top_p":0.5}')).toEqual({ ok: true, model: { name: "gpt-4o", top_p: 0.5 } });
    expect(checkModel('{"name":"m","seed":1}')).toEqual({
      ok: false,
      error: "model.seed: is not a known setting; put provider-specific settings in model.extra",
    });
    expect(checkModel('{"name":"m","stop":["a",""]}')).toEqual({
      ok: false,
      error: "model.stop[1]: must not be empty",
    });
    expect(checkModel("[]")).toEqual({ ok: false, error: "model: must be an object, not an array" });
    expect(checkModel("{")).toMatchObject({ ok: false, error: expect.stringMatching(/^model: not valid JSON: /) });
  });
});
