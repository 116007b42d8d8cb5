import { useSyncExternalStore } from "react";
import { fullDate, timeAgo } from "./format";

// One clock for every relative time on the page, ticking every 15 s while something shows one.
let now = Date.now();
const listeners = new Set<() => void>();
let timer: number | undefined;

function subscribe(listener: () => void) {
  listeners.add(listener);
  if (timer === undefined) {
    timer = window.setInterval(() => {
      now = Date.now();
      for (const l of listeners) l();
    }, 15_000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      window.clearInterval(timer);
      timer = undefined;
    }
  };
}

export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now);
}

export function TimeAgo({ iso }: { iso: string }) {
  // The clock only re-renders; the time is read now, so a page opened after a long idle is not stale.
  useNow();
  return (
    <time dateTime={iso} title={fullDate(iso)}>
      {timeAgo(iso)}
    </time>
  );
}
