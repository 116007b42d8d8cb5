import { useEffect, useState } from "react";

/** Seconds left until `until` (epoch ms), updated every second; 0 when past or null. */
export function useCountdown(until: number | null): number {
  const [left, setLeft] = useState(0);
  useEffect(() => {
    if (until === null) {
      setLeft(0);
      return;
    }
    const tick = () => setLeft(Math.max(0, Math.ceil((until - Date.now()) / 1000)));
    tick();
    const timer = window.setInterval(tick, 1000);
    return () => window.clearInterval(timer);
  }, [until]);
  return left;
}
