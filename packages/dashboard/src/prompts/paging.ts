/**
 * The prompt list's paging, kept pure (no React) so it is unit-tested: which page the address asks for, and
 * how many pages the server's count makes. The search itself is the server's (core's `matchesSearch`).
 */

import { PROMPT_SEARCH_MAX } from "@promptstore/core/dashboard";

/** What the server is asked to search for: the text as typed, trimmed, and no longer than it answers. */
export function searchText(typed: string): string {
  return typed.trim().slice(0, PROMPT_SEARCH_MAX).trim();
}

/** Prompts on one page of the list. */
export const PAGE_SIZE = 50;

/** The highest page the server answers (core's `promptPageQuery`). */
const LAST_PAGE = 1_000_000;

/** `?page=` as a page number: 1 for anything that is not one (missing, "x", "0", "-2"), whole, at most the server's. */
export function pageParam(raw: string | null): number {
  const n = Math.floor(Number(raw));
  if (!Number.isFinite(n) || n < 1) return 1;
  return Math.min(n, LAST_PAGE);
}

/** How many pages `matching` prompts fill: at least one, the page that says there are none. */
export function pageCount(matching: number, perPage: number = PAGE_SIZE): number {
  return Math.max(1, Math.ceil(matching / perPage));
}

/** `?page=` for page `page`: none for the first, so the list's plain address stays plain. */
export function pageValue(page: number): string | null {
  return page <= 1 ? null : String(page);
}
