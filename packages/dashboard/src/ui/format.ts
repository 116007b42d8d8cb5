/** Pure formatting shared by the screens; unit-tested, so every screen words times and hashes alike. */

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "just now", "42 s ago", "3 min ago", "5 h ago", "2 d ago", "4 mo ago", "2 y ago". */
export function timeAgo(iso: string, now: number = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "unknown time";
  // A clock a little ahead of ours is not "in the future" to a reader.
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  if (seconds < 10) return "just now";
  if (seconds < MINUTE) return `${seconds} s ago`;
  if (seconds < HOUR) return `${Math.floor(seconds / MINUTE)} min ago`;
  if (seconds < DAY) return `${Math.floor(seconds / HOUR)} h ago`;
  if (seconds < 30 * DAY) return `${Math.floor(seconds / DAY)} d ago`;
  if (seconds < 365 * DAY) return `${Math.floor(seconds / (30 * DAY))} mo ago`;
  return `${Math.floor(seconds / (365 * DAY))} y ago`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const twoDigits = (n: number) => String(n).padStart(2, "0");

/**
 * The full local date and time, for a tooltip next to a relative time: "26 Nov 2026, 09:05:07". Written out, not
 * `toLocaleString()`: its first call in a page loads ICU's data (20 ms on an idle page, about 50 in the first
 * page of a 100 000-prompt list, where every row has one), as Intl.NumberFormat's did (formatCount below); and
 * a month's name before the year reads the same in every country.
 */
export function fullDate(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const time = [date.getHours(), date.getMinutes(), date.getSeconds()].map(twoDigits).join(":");
  return `${date.getDate()} ${MONTHS[date.getMonth()]} ${date.getFullYear()}, ${time}`;
}

/** The 7-character prefix a person reads and types. */
export const shortHash = (hash: string): string => hash.slice(0, 7);

// Making an Intl.NumberFormat costs 30-80 ms the first time in a page (ICU's data is loaded): made at start, it
// held up every screen. Whole numbers, every count shown, are grouped here; the formatter only for others.
let count: Intl.NumberFormat | null = null;
export function formatCount(n: number): string {
  if (Number.isSafeInteger(n)) return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  count ??= new Intl.NumberFormat("en-US");
  return count.format(n);
}

/** "1–50 of 1,000"; "0 of 0" for an empty list. */
export function rangeLabel(start: number, end: number, total: number): string {
  if (total === 0 || end <= start) return `0 of ${formatCount(total)}`;
  return `${formatCount(start + 1)}–${formatCount(end)} of ${formatCount(total)}`;
}

/** `user:ada@example.com` → "ada@example.com"; `key:ps_abc` → "API key ps_abc…". */
export function savedByLabel(savedBy: string | null): string {
  if (savedBy === null || savedBy === "") return "not recorded";
  if (savedBy.startsWith("user:")) return savedBy.slice("user:".length);
  if (savedBy.startsWith("key:")) return `API key ${savedBy.slice("key:".length)}…`;
  return savedBy;
}

/** "1 prompt", "3 prompts". */
export const plural = (n: number, one: string, many = `${one}s`): string => `${formatCount(n)} ${n === 1 ? one : many}`;

/** "34 s", "1 min 5 s". */
export function formatSeconds(total: number): string {
  const s = Math.max(0, Math.round(total));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return rest === 0 ? `${m} min` : `${m} min ${rest} s`;
}
