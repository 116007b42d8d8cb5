import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";

/**
 * JUnit XML, as CI systems read it (GitHub, GitLab, Jenkins, CircleCI, Buildkite): `<testsuites>` holding one
 * `<testsuite>` per prompt evaluated, one `<testcase>` per dataset case, and in a case that did not pass a
 * `<failure>` (its checks said no), an `<error>` (no verdict: the provider failed, or a check could not
 * decide) or `<skipped/>` (not judged: a stopped evaluation). A small writer of our own: the client has no
 * runtime dependency.
 *
 * The counts in the suites' attributes are counted from the cases written, never taken on trust: each suite's
 * cases go to a file of their own first, and the document is put together once every count is known. So a
 * dataset of any size is written without being held.
 */

/**
 * Characters XML 1.0 cannot hold at all (C0 controls but tab, line feed and carriage return; U+FFFE, U+FFFF;
 * a lone surrogate), shown as `\uXXXX` instead.
 */
const NOT_XML =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the characters XML cannot hold is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const visible = (text: string) =>
  text.replace(NOT_XML, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`);

/** Text content: `&`, `<` and `>` escaped (`>` for `]]>`), what XML cannot hold made visible. */
export function xmlText(text: string): string {
  return visible(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** An attribute's value in double quotes: also quotes, and line ends and tabs as references (they survive). */
export function xmlAttribute(text: string): string {
  return xmlText(text)
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")
    .replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;")
    .replace(/\t/g, "&#9;");
}

const attributes = (values: Record<string, string | number | undefined>): string =>
  Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlAttribute(String(v))}"`)
    .join("");

export type CaseOutcome =
  | { kind: "passed" }
  | { kind: "failed"; message: string; type: string; details: string }
  | { kind: "errored"; message: string; type: string; details: string }
  | { kind: "skipped"; message: string };

export interface SuiteInfo {
  name: string;
  properties: Record<string, string>;
  timestamp: string;
}

interface Suite extends SuiteInfo {
  part: string;
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  time: number;
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

async function write(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, "drain");
}

async function close(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, "close");
}

export class JUnitWriter {
  private readonly suites: Suite[] = [];
  private current: { suite: Suite; stream: WriteStream } | undefined;

  constructor(private readonly file: string) {}

  async startSuite(info: SuiteInfo): Promise<void> {
    await this.endSuite();
    const suite: Suite = {
      ...info,
      part: `${this.file}.${this.suites.length}.part`,
      tests: 0,
      failures: 0,
      errors: 0,
      skipped: 0,
      time: 0,
    };
    this.suites.push(suite);
    this.current = { suite, stream: createWriteStream(suite.part) };
  }

  async addCase(name: string, classname: string, timeMs: number | null, outcome: CaseOutcome): Promise<void> {
    const current = this.current;
    if (!current) throw new Error("JUnitWriter: addCase before startSuite");
    const { suite, stream } = current;
    suite.tests++;
    suite.time += timeMs ?? 0;
    const head = `    <testcase${attributes({ name, classname, time: seconds(timeMs ?? 0) })}`;
    let text: string;
    switch (outcome.kind) {
      case "passed":
        text = `${head}/>\n`;
        break;
      case "skipped":
        suite.skipped++;
        text = `${head}>\n      <skipped${attributes({ message: outcome.message })}/>\n    </testcase>\n`;
        break;
      case "failed":
      case "errored": {
        const element = outcome.kind === "failed" ? "failure" : "error";
        if (outcome.kind === "failed") suite.failures++;
        else suite.errors++;
        text = `${head}>\n      <${element}${attributes({ message: outcome.message, type: outcome.type })}>${xmlText(outcome.details)}</${element}>\n    </testcase>\n`;
        break;
      }
    }
    await write(stream, text);
  }

  private async endSuite(): Promise<void> {
    if (this.current) await close(this.current.stream);
    this.current = undefined;
  }

  /** The counts written, per suite. */
  counts(): { name: string; tests: number; failures: number; errors: number; skipped: number }[] {
    return this.suites.map(({ name, tests, failures, errors, skipped }) => ({
      name,
      tests,
      failures,
      errors,
      skipped,
    }));
  }

  /** Puts the document together (written beside the file, then renamed into place) and removes the parts. */
  async finish(): Promise<void> {
    await this.endSuite();
    const sum = (key: "tests" | "failures" | "errors" | "skipped" | "time") =>
      this.suites.reduce((n, s) => n + s[key], 0);
    const out = createWriteStream(`${this.file}.tmp`);
    try {
      await write(
        out,
        `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites${attributes({
          name: "promptstore eval",
          tests: sum("tests"),
          failures: sum("failures"),
          errors: sum("errors"),
          skipped: sum("skipped"),
          time: seconds(sum("time")),
        })}>\n`,
      );
      for (const [id, suite] of this.suites.entries()) {
        await write(
          out,
          `  <testsuite${attributes({
            name: suite.name,
            id,
            tests: suite.tests,
            failures: suite.failures,
            errors: suite.errors,
            skipped: suite.skipped,
            time: seconds(suite.time),
            timestamp: suite.timestamp,
          })}>\n`,
        );
        const properties = Object.entries(suite.properties);
        if (properties.length > 0) {
          await write(out, "    <properties>\n");
          for (const [name, value] of properties) await write(out, `      <property${attributes({ name, value })}/>\n`);
          await write(out, "    </properties>\n");
        }
        for await (const chunk of createReadStream(suite.part)) await write(out, chunk as unknown as string);
        await write(out, "  </testsuite>\n");
      }
      await write(out, "</testsuites>\n");
      await close(out);
      await rename(`${this.file}.tmp`, this.file);
    } finally {
      if (!out.closed) out.destroy();
      for (const suite of this.suites) await rm(suite.part, { force: true });
      await rm(`${this.file}.tmp`, { force: true });
    }
  }

  /** Removes the parts after a failure; the file itself is not written. */
  async abort(): Promise<void> {
    if (this.current) this.current.stream.destroy();
    this.current = undefined;
    for (const suite of this.suites) await rm(suite.part, { force: true });
  }
}
