import { Readable } from "node:stream";
import { AppError, badRequest } from "@promptstore/core/errors";
import { CSV_RESERVED_COLUMNS, CSV_TAG_SEPARATOR } from "@promptstore/core/evaluations/dataset-api";
import { type CsvError, parse as parseCsv } from "csv-parse";
import secureJsonParse from "secure-json-parse";

/**
 * Reading a dataset file as it arrives (docs/evaluations.md, "Import"): JSONL and CSV, one case at a time, each
 * with the line it starts on, so that a refusal names the line and nothing holds the file whole. What the
 * cases say is checked by the service; here only the file's own form.
 */
export type ImportFormat = "jsonl" | "csv";

/** One case as read from a file: not checked yet. */
export interface FileCase {
  line: number;
  value: unknown;
}

/** A line of a JSONL file (or a CSV record) may hold this much; one case holds 100 KiB as canonical JSON. */
export const MAX_LINE_BYTES = 1024 * 1024;

const parseJson = (text: string): unknown =>
  secureJsonParse.parse(text, undefined, { protoAction: "remove", constructorAction: "remove" });

/** The bytes of `source`, refused with a 413 once they pass `maxBytes` (what was read so far is not kept). */
export async function* bounded(source: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    total += bytes.length;
    if (total > maxBytes) {
      throw new AppError("payload_too_large", `body: an import may hold at most ${maxBytes} bytes`);
    }
    yield bytes;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeLine(parts: Buffer[], line: number): string {
  try {
    return utf8.decode(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts));
  } catch {
    throw badRequest(`line ${line}: is not valid UTF-8`);
  }
}

/**
 * JSONL: one JSON value per line (`\n`, or `\r\n`); blank lines are skipped, a byte order mark at the start
 * is ignored. A line longer than MAX_LINE_BYTES is refused before it is held whole.
 */
export async function* jsonlCases(source: AsyncIterable<Buffer>): AsyncGenerator<FileCase> {
  let parts: Buffer[] = [];
  let held = 0;
  let line = 1;
  const finish = (): FileCase | undefined => {
    let text = decodeLine(parts, line);
    parts = [];
    held = 0;
    if (line === 1 && text.startsWith("\ufeff")) text = text.slice(1);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.trim() === "") return undefined;
    try {
      return { line, value: parseJson(text) };
    } catch {
      throw badRequest(`line ${line}: is not valid JSON`);
    }
  };
  for await (const chunk of source) {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      held += end - start;
      if (held > MAX_LINE_BYTES) throw badRequest(`line ${line}: is longer than ${MAX_LINE_BYTES} bytes`);
      parts.push(chunk.subarray(start, end));
      const found = finish();
      if (found) yield found;
      line++;
      start = end + 1;
    }
    if (start < chunk.length) {
      held += chunk.length - start;
      if (held > MAX_LINE_BYTES) throw badRequest(`line ${line}: is longer than ${MAX_LINE_BYTES} bytes`);
      // A copy: the chunk's memory is the stream's, and a slice would keep all of it alive.
      parts.push(Buffer.from(chunk.subarray(start)));
    }
  }
  if (held > 0) {
    const found = finish();
    if (found) yield found;
  }
}

/** csv-parse's refusals in words, naming the line (its `lines` is where it stopped). */
function csvProblem(error: CsvError): AppError {
  const line = (error as CsvError & { lines?: number }).lines ?? 1;
  const words: Record<string, string> = {
    CSV_QUOTE_NOT_CLOSED: "a quoted field is not closed",
    CSV_MAX_RECORD_SIZE: `a record is longer than ${MAX_LINE_BYTES} bytes`,
    CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: "does not have as many fields as the header",
    CSV_RECORD_INCONSISTENT_COLUMNS: "does not have as many fields as the header",
    CSV_INVALID_CLOSING_QUOTE: "has a character after a closing quote",
    CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: "has a character after a closing quote",
    INVALID_OPENING_QUOTE: "has a quote inside an unquoted field",
  };
  return badRequest(`line ${line}: ${words[error.code] ?? "is not valid CSV"}`);
}

const RESERVED = new Set<string>(CSV_RESERVED_COLUMNS);

/**
 * CSV (RFC 4180): a header row names the columns. Every column is a variable (`vars`), except `expected` (the
 * reference answer; an empty cell is none), `tags` (separated by `|`; spaces around each are trimmed, empty
 * ones dropped) and `messages` (a JSON array of chat messages; an empty cell is none). Variable cells are
 * taken as they are, an empty cell being the empty string. A record may span lines (a quoted field with a
 * line break): its line is the one it starts on.
 */
export async function* csvCases(source: AsyncIterable<Buffer>): AsyncGenerator<FileCase> {
  const parser = parseCsv({
    bom: true,
    info: true,
    skip_empty_lines: true,
    max_record_size: MAX_LINE_BYTES,
    // Files whose lines end either way (a header written by one tool, rows by another).
    record_delimiter: ["\r\n", "\n"],
  });
  const input = Readable.from(source, { objectMode: false });
  input.on("error", (error) => parser.destroy(error));
  input.pipe(parser);
  let header: string[] | undefined;
  let lastLine = 0;
  let lastEmpty = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number; empty_lines: number };
    }>) {
      const line = lastLine + 1 + (info.empty_lines - lastEmpty);
      lastLine = info.lines;
      lastEmpty = info.empty_lines;
      if (header === undefined) {
        header = checkedHeader(record, line);
        continue;
      }
      yield { line, value: csvCase(header, record, line) };
    }
  } catch (error) {
    if ((error as CsvError).code?.startsWith?.("CSV_") || (error as CsvError).code === "INVALID_OPENING_QUOTE") {
      throw csvProblem(error as CsvError);
    }
    throw error;
  } finally {
    input.destroy();
    parser.destroy();
  }
  if (header === undefined) throw badRequest("line 1: a CSV import needs a header row naming its columns");
}

function checkedHeader(record: string[], line: number): string[] {
  const seen = new Set<string>();
  record.forEach((name, i) => {
    if (name.trim() === "") throw badRequest(`line ${line}: column ${i + 1} has no name`);
    if (name.length > 200) throw badRequest(`line ${line}: column ${i + 1}'s name is longer than 200 characters`);
    if (seen.has(name)) throw badRequest(`line ${line}: column ${JSON.stringify(name)} appears twice`);
    if (name === "__proto__") throw badRequest(`line ${line}: column "__proto__" cannot name a variable`);
    seen.add(name);
  });
  return record;
}

function csvCase(header: string[], record: string[], line: number): Record<string, unknown> {
  const vars: Record<string, string> = {};
  const value: Record<string, unknown> = { vars };
  header.forEach((name, i) => {
    const cell = record[i] ?? "";
    if (!RESERVED.has(name)) {
      vars[name] = cell;
    } else if (name === "expected") {
      if (cell !== "") value.expected = cell;
    } else if (name === "tags") {
      const tags = cell
        .split(CSV_TAG_SEPARATOR)
        .map((t) => t.trim())
        .filter((t) => t !== "");
      if (tags.length > 0) value.tags = tags;
    } else if (cell.trim() !== "") {
      try {
        value.messages = parseJson(cell);
      } catch {
        throw badRequest(`line ${line}: messages: is not valid JSON`);
      }
    }
  });
  return value;
}

/** The cases of a file of `format`, read from `source` within `maxBytes`. */
export function fileCases(format: ImportFormat, source: AsyncIterable<Buffer>, maxBytes: number) {
  const bytes = bounded(source, maxBytes);
  return format === "jsonl" ? jsonlCases(bytes) : csvCases(bytes);
}
