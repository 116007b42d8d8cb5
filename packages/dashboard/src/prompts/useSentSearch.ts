import { useEffect, useState } from "react";

/** How long the search text rests before it is sent: a search reads every name of the project on the server. */
export const SEARCH_DELAY_MS = 200;

/**
 * The search and page the list asks the server for. A page change is sent at once; the search text once it
 * has rested SEARCH_DELAY_MS, and clearing it at once (every prompt, usually still held). While the text is
 * still moving, the last request sent stands, page included: the address's page goes back to 1 at the first
 * keystroke, and asking meanwhile for page 1 of the old search would be a search wasted.
 */
export function useSentSearch(q: string, page: number): { q: string; page: number } {
  const [sent, setSent] = useState({ q, page });
  // Kept in step during render (React's "value from the previous render" pattern), not in an effect: the
  // request of this very render must be the right one.
  if ((q === sent.q && page !== sent.page) || (q === "" && sent.q !== "")) setSent({ q, page });
  const settled = q === sent.q || q === "";
  useEffect(() => {
    if (settled) return;
    const timer = window.setTimeout(() => setSent({ q, page }), SEARCH_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [settled, q, page]);
  return settled ? { q, page } : sent;
}
