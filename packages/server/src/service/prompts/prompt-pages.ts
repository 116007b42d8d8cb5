import { type DashboardPromptItem, matchesSearch } from "@promptstore/core/dashboard";
import type { Section } from "@promptstore/core/prompts/content";
import { extractVariables } from "@promptstore/core/prompts/variables";
import type { PromptListItem } from "@promptstore/core/views";
import type { ListKey } from "../../store/prompts/prompt-list-queries.js";
import type { PromptRow } from "../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import { inTurn } from "../loop-turns.js";

/** One page of an unpaged list as the store reads it for a streamed answer; `last` when none follows. */
export interface ListPage<T> {
  items: T[];
  last: boolean;
}

/**
 * Prompts per page of an unpaged list: a page is one piece of heavy work (loop-turns.ts), about 80 KB of JSON
 * and a millisecond or two of the event loop on either database (500 made pieces of about 5 ms); the
 * dashboard's pages also read each prompt's summary and labels, so they are smaller.
 */
export const LIST_PAGE_SIZE = 200;
export const DASHBOARD_PAGE_SIZE = 100;
/**
 * Names read per piece of a search of the list: about 100 KB, 3 ms on a slow 2-core machine (2 000 took 6 there).
 * The unsearched list is counted in pieces of the same size: pieces of 10 000 made the first page of 100 000
 * prompts about 90 ms faster on PostgreSQL, but reads under four searches went from p99 19 to 24 ms there.
 */
export const SEARCH_PIECE_SIZE = 1000;

/**
 * Every prompt of the project, oldest first, page by page (keyset on `created_at, id`, as a client's paged
 * list): each page is one short query, so a list of 100 000 prompts never holds the event loop nor the
 * whole list in memory. Items are exactly those of the one-query list (`PromptService.list`).
 */
export async function* listPages(
  store: ProjectStore,
  pageSize = LIST_PAGE_SIZE,
): AsyncGenerator<ListPage<PromptListItem>> {
  let after: ListKey | undefined;
  for (;;) {
    const { items, end, last } = await inTurn(async () => {
      const rows = await store.listPrompts({ after, limit: pageSize + 1 });
      const page = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
      return { items: await withPageLabels(store, page), end: page[page.length - 1], last: rows.length <= pageSize };
    });
    yield { items, last };
    if (last || !end) return;
    after = { created_at: end.created_at, id: end.id };
  }
}

/** Every item of every page, in one array: for the answers that are one piece (MCP's). */
export async function collect<T>(pages: AsyncGenerator<ListPage<T>>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pages) items.push(...page.items);
  return items;
}

/** The dashboard's list (variables of the served version, the pointers' ages), page by page as above. */
export async function* dashboardPages(
  store: ProjectStore,
  pageSize = DASHBOARD_PAGE_SIZE,
): AsyncGenerator<ListPage<DashboardPromptItem>> {
  for await (const { items, last } of listPages(store, pageSize)) {
    yield { items: await inTurn(() => withVariables(store, items)), last };
  }
}

/**
 * List items (a page) with the dashboard's additions: the served version's variables as stored at save (its
 * contents read only for a version saved before documents were), and the pointers' ages.
 */
export async function withVariables(store: ProjectStore, items: PromptListItem[]): Promise<DashboardPromptItem[]> {
  if (items.length === 0) return [];
  const summaries = await store.lists().listSummaries(items.map((p) => p.id));
  const byId = new Map(summaries.map((s) => [s.id, s]));
  const undocumented = summaries.filter((s) => s.variables_json === null).map((s) => s.id);
  const contents = undocumented.length > 0 ? await store.lists().servedEnabledContents(undocumented) : [];
  const sections = new Map<string, Section[]>();
  for (const row of contents) {
    const list = sections.get(row.prompt_id) ?? [];
    list.push({ title: "", content: row.content, enabled: true });
    sections.set(row.prompt_id, list);
  }
  return items.map((p) => {
    const summary = byId.get(p.id);
    const stored = summary?.variables_json;
    return {
      ...p,
      variables:
        stored === null || stored === undefined
          ? extractVariables(sections.get(p.id) ?? [])
          : (JSON.parse(stored) as string[]),
      production_saved_at: summary?.production_saved_at ?? null,
      latest_saved_at: summary?.latest_saved_at ?? p.updated_at,
    };
  });
}

/** Rows with every label of each (production first when set, then the others by name). */
export function labelled<T extends PromptRow>(
  rows: T[],
  labelRows: { prompt_id: string; name: string; version: string }[],
): (T & { labels: Record<string, string> })[] {
  const others = new Map<string, [string, string][]>();
  for (const { prompt_id, name, version } of labelRows) {
    const list = others.get(prompt_id) ?? [];
    list.push([name, version]);
    others.set(prompt_id, list);
  }
  return rows.map((row) => {
    const labels: Record<string, string> = {};
    if (row.production_version !== null) labels.production = row.production_version;
    for (const [name, version] of others.get(row.id) ?? []) labels[name] = version;
    return { ...row, labels };
  });
}

export async function withPageLabels(store: ProjectStore, rows: PromptRow[]): Promise<PromptListItem[]> {
  if (rows.length === 0) return [];
  return labelled(rows, await store.labels().labelsOfPrompts(rows.map((r) => r.id)));
}

/** One page of the dashboard's list among the prompts a search matches, with the counts the screen shows. */
export interface SearchPage {
  items: DashboardPromptItem[];
  matching: number;
  total: number;
  labels: string[];
}

/** How a page is read: `pieceSize` (tests cross the pieces' edges with small ones); `signal` stops it between pieces. */
export interface PageReading {
  pieceSize?: number;
  /** Aborted when nobody waits for the page any more (its client left): the next piece throws its reason. */
  signal?: AbortSignal | undefined;
}

/**
 * The prompts of page `page` (of `perPage`) among those whose name or id holds `q` (core's `matchesSearch`, the
 * rule the screen has always had), in list order. With nothing to match, a count and the page from the list's
 * index; with a search, every name is read, a piece at a time taking turns of the event loop, to count the
 * matches: a search of 100 000 prompts holds the loop no longer than a read does.
 */
export async function searchPage(
  store: ProjectStore,
  q: string,
  page: number,
  perPage: number,
  { pieceSize = SEARCH_PIECE_SIZE, signal }: PageReading = {},
): Promise<SearchPage> {
  const skip = (page - 1) * perPage;
  /** A piece of this page's reading, in its turn, unless nobody waits for the page any more. */
  const piece = <T>(work: () => Promise<T> | T) => {
    signal?.throwIfAborted();
    return inTurn(work);
  };
  let found: { ids: string[]; matching: number; total: number };
  if (q.trim() === "") {
    found = await positionPage(store, skip, perPage, pieceSize, piece);
  } else {
    found = await scanMatches(store, q, skip, perPage, pieceSize, piece);
  }
  return piece(async () => {
    const rows = await store.lists().promptsByIds(found.ids);
    const items = await withVariables(store, await withPageLabels(store, rows));
    return { items, matching: found.matching, total: found.total, labels: await store.labels().namesInUse() };
  });
}

/** Runs one piece of a page's reading (searchPage's `piece`). */
type Piece = <T>(work: () => Promise<T> | T) => Promise<T>;

/**
 * The ids of the prompts `skip` to `skip + take` of the unsearched list, and how many there are: counted
 * `pieceSize` at a time, each piece taking its turn, stepping from piece to piece by the key at its end, so no
 * query walks more than one piece of the list's index (on SQLite, one count of 100 000 rows and the offset to a
 * last page each held the loop about 8 ms). A piece with a key at its end is full, so only the last is counted:
 * one query a piece, not two (at 100 000 prompts, 101 queries instead of 200).
 */
async function positionPage(store: ProjectStore, skip: number, take: number, pieceSize: number, piece: Piece) {
  const lists = store.lists();
  let total = 0;
  let after: ListKey | undefined;
  /** The piece the page starts in: the key before it and the page's offset inside it. */
  let start: { after: ListKey | undefined; offset: number } | undefined;
  for (;;) {
    const end = await piece(() => lists.keyAt(after, pieceSize - 1));
    const counted = end === undefined ? await piece(() => lists.countAfter(after, pieceSize)) : pieceSize;
    if (start === undefined && skip < total + counted) start = { after, offset: skip - total };
    total += counted;
    if (end === undefined) break;
    after = end;
  }
  const from = start;
  const ids = from === undefined ? [] : await piece(() => lists.promptIdsAt(from.after, from.offset, take));
  return { ids, matching: total, total };
}

/** Every name and id, `pieceSize` at a time: the ids of the matches `skip` to `skip + take`, and the counts. */
async function scanMatches(
  store: ProjectStore,
  q: string,
  skip: number,
  take: number,
  pieceSize: number,
  piece: Piece,
) {
  const ids: string[] = [];
  let matching = 0;
  let total = 0;
  let after: ListKey | undefined;
  for (;;) {
    const rows = await piece(async () => {
      const names = await store.lists().promptNames(after, pieceSize);
      for (const row of names) {
        if (!matchesSearch(row, q)) continue;
        if (matching >= skip && ids.length < take) ids.push(row.id);
        matching++;
      }
      return names;
    });
    total += rows.length;
    const end = rows[rows.length - 1];
    if (rows.length < pieceSize || !end) return { ids, matching, total };
    after = { created_at: end.created_at, id: end.id };
  }
}
