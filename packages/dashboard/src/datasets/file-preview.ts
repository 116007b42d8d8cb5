/**
 * A look at a dataset file before it is sent (docs/evaluations.md, "Import"): its format, how many cases its
 * start holds, the first few as the server will read them, and the first problem, named by its line in the
 * server's words. The server reads the whole file again and is the judge; this only spares a round trip for a
 * file that is plainly wrong (a CSV saved as JSONL, a header missing). Pure, so it is unit-tested.
 *
 * The rules are the server's (service/evaluations/dataset-files.ts): JSONL is one JSON object per line, blank
 * lines skipped; CSV (RFC 4180) has a header row, every column a variable except `expected` (empty: none),
 * `tags` (split on `|`, trimmed, empty ones dropped) and `messages` (a JSON array; empty: none).
 */
import { CSV_RESERVED_COLUMNS, CSV_TAG_SEPARATOR } from "@promptstore/core/evaluations/constants";
import type { FileFormat } from "../api/dataset-queries";

/** A case as a file line gives it, not checked further than its form. */
export interface PreviewCase {
  line: number;
  vars: Record<string, string>;
  expected?: string;
  tags?: string[];
  messages?: unknown[];
}

export interface Preview {
  format: FileFormat;
  /** Cases found in what was read (all of a pasted text; the start of a large file). */
  count: number;
  /** The first cases, for a table. */
  cases: PreviewCase[];
  /** Variable names in the order they first appear. */
  columns: string[];
  /** The first problem found, as the server would say it (`line 3: is not valid JSON`), or null. */
  problem: string | null;
  /** Only the start of the file was read: `count` is a lower bound. */
  partial: boolean;
}

/** How many bytes of a file the preview reads. */
export const PREVIEW_BYTES = 256 * 1024;

/** The format a file's name says, else what its first character suggests (`{` is JSONL). */
export function detectFormat(name: string, text: string): FileFormat {
  const lower = name.toLowerCase();
  if (/\.(jsonl|ndjson|json)$/.test(lower)) return "jsonl";
  if (/\.(csv|tsv)$/.test(lower)) return "csv";
  const first = text.replace(/^\ufeff/, "").trimStart()[0];
  return first === "{" ? "jsonl" : "csv";
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The fields of a JSONL line's case that a table shows; the rest the server checks. */
function fromJson(line: number, value: unknown): PreviewCase | string {
  if (!isObject(value)) return `line ${line}: must be a JSON object ({ "vars": {…}, "expected"?: … })`;
  const out: PreviewCase = { line, vars: {} };
  const vars = value.vars;
  if (vars !== undefined) {
    if (!isObject(vars)) return `line ${line}: vars: must be an object of variable values`;
    for (const [name, v] of Object.entries(vars)) {
      if (typeof v !== "string") return `line ${line}: vars.${name}: must be a string`;
      out.vars[name] = v;
    }
  }
  if (value.expected !== undefined) {
    if (typeof value.expected !== "string") return `line ${line}: expected: must be a string`;
    out.expected = value.expected;
  }
  if (value.tags !== undefined) {
    if (!Array.isArray(value.tags) || value.tags.some((t) => typeof t !== "string")) {
      return `line ${line}: tags: must be an array of strings`;
    }
    out.tags = value.tags as string[];
  }
  if (value.messages !== undefined) {
    if (!Array.isArray(value.messages)) return `line ${line}: messages: must be an array of chat messages`;
    out.messages = value.messages;
  }
  for (const key of Object.keys(value)) {
    if (!["vars", "expected", "tags", "messages"].includes(key)) return `line ${line}: ${key}: is not a known field`;
  }
  return out;
}

function previewJsonl(text: string, partial: boolean, shown: number): Omit<Preview, "format" | "columns"> {
  const lines = text.replace(/^\ufeff/, "").split("\n");
  // A partial read ends mid-line: that line is not looked at.
  if (partial) lines.pop();
  const cases: PreviewCase[] = [];
  let count = 0;
  for (const [i, raw] of lines.entries()) {
    const line = i + 1;
    const body = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (body.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return { count, cases, problem: `line ${line}: is not valid JSON`, partial };
    }
    const found = fromJson(line, value);
    if (typeof found === "string") return { count, cases, problem: found, partial };
    count++;
    if (cases.length < shown) cases.push(found);
  }
  return { count, cases, problem: null, partial };
}

interface CsvRecord {
  line: number;
  fields: string[];
}

/**
 * RFC 4180 records with the line each starts on: fields separated by commas, quoted fields may hold commas,
 * line breaks and doubled quotes; records end at CRLF or LF; empty lines are skipped. A quote inside an
 * unquoted field, a character after a closing quote or an unclosed quote is a problem, as the server says.
 */
export function csvRecords(text: string, partial = false): { records: CsvRecord[]; problem: string | null } {
  const input = text.replace(/^\ufeff/, "");
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = "";
  let line = 1;
  let start = 1;
  let i = 0;
  let quoted = false;
  let fieldStarted = false;
  const endRecord = () => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === "")) records.push({ line: start, fields });
    fields = [];
    field = "";
    fieldStarted = false;
  };
  while (i < input.length) {
    const c = input[i] as string;
    if (quoted) {
      if (c === '"') {
        if (input[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = input[i];
        if (next !== undefined && next !== "," && next !== "\n" && next !== "\r") {
          return { records, problem: `line ${line}: has a character after a closing quote` };
        }
        continue;
      }
      if (c === "\n") line++;
      field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (fieldStarted) return { records, problem: `line ${line}: has a quote inside an unquoted field` };
      quoted = true;
      fieldStarted = true;
      i++;
      continue;
    }
    if (c === ",") {
      fields.push(field);
      field = "";
      fieldStarted = false;
      i++;
      continue;
    }
    if (c === "\r" || c === "\n") {
      endRecord();
      i += c === "\r" && input[i + 1] === "\n" ? 2 : 1;
      line++;
      start = line;
      continue;
    }
    field += c;
    fieldStarted = true;
    i++;
  }
  if (quoted) {
    // A partial read may stop inside a quoted field: that record is not looked at.
    if (partial) return { records, problem: null };
    return { records, problem: `line ${start}: a quoted field is not closed` };
  }
  // A partial read's last record may be cut short; a whole text's last record ends with the text.
  if (!partial && (field !== "" || fields.length > 0)) endRecord();
  return { records, problem: null };
}

const RESERVED = new Set<string>(CSV_RESERVED_COLUMNS);

function previewCsv(text: string, partial: boolean, shown: number): Omit<Preview, "format" | "columns"> {
  const { records, problem } = csvRecords(text, partial);
  const [header, ...rows] = records;
  if (header === undefined) {
    return {
      count: 0,
      cases: [],
      problem: problem ?? "line 1: a CSV import needs a header row naming its columns",
      partial,
    };
  }
  const seen = new Set<string>();
  for (const [i, name] of header.fields.entries()) {
    if (name.trim() === "")
      return { count: 0, cases: [], problem: `line ${header.line}: column ${i + 1} has no name`, partial };
    if (seen.has(name)) {
      return {
        count: 0,
        cases: [],
        problem: `line ${header.line}: column ${JSON.stringify(name)} appears twice`,
        partial,
      };
    }
    seen.add(name);
  }
  const cases: PreviewCase[] = [];
  let count = 0;
  for (const row of rows) {
    if (row.fields.length !== header.fields.length) {
      return { count, cases, problem: `line ${row.line}: does not have as many fields as the header`, partial };
    }
    const found: PreviewCase = { line: row.line, vars: {} };
    for (const [i, name] of header.fields.entries()) {
      const cell = row.fields[i] ?? "";
      if (!RESERVED.has(name)) found.vars[name] = cell;
      else if (name === "expected") {
        if (cell !== "") found.expected = cell;
      } else if (name === "tags") {
        const tags = cell
          .split(CSV_TAG_SEPARATOR)
          .map((t) => t.trim())
          .filter((t) => t !== "");
        if (tags.length > 0) found.tags = tags;
      } else if (cell.trim() !== "") {
        try {
          const messages: unknown = JSON.parse(cell);
          found.messages = Array.isArray(messages) ? messages : [messages];
        } catch {
          return { count, cases, problem: `line ${row.line}: messages: is not valid JSON`, partial };
        }
      }
    }
    count++;
    if (cases.length < shown) cases.push(found);
  }
  return { count, cases, problem, partial };
}

/** The variable names of these cases, in the order they first appear. */
export function columnsOf(cases: readonly { vars: Record<string, string> }[]): string[] {
  const names = new Set<string>();
  for (const c of cases) for (const name of Object.keys(c.vars)) names.add(name);
  return [...names];
}

/** A preview of `text` in `format`; `partial` when it is only the start of a file. */
export function previewText(
  text: string,
  format: FileFormat,
  options: { partial?: boolean; shown?: number } = {},
): Preview {
  const partial = options.partial ?? false;
  const shown = options.shown ?? 5;
  const found = format === "jsonl" ? previewJsonl(text, partial, shown) : previewCsv(text, partial, shown);
  return { format, ...found, columns: columnsOf(found.cases) };
}

/** What a form lets a person choose: a format, or recognize it from the file. */
export type FormatChoice = "auto" | FileFormat;

/** The format chosen, or the one a file's name or first character says. */
export const formatOf = (chosen: FormatChoice, name: string, sample: string): FileFormat =>
  chosen === "auto" ? detectFormat(name, sample) : chosen;

/** The preview of a file's start: a 1 GB file is not read here, only sent. */
export async function previewFile(file: File, chosen: FormatChoice): Promise<Preview> {
  const sample = await file.slice(0, PREVIEW_BYTES).text();
  return previewText(sample, formatOf(chosen, file.name, sample), { partial: file.size > PREVIEW_BYTES });
}
