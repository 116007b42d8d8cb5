import { useCallback, useEffect, useRef, useState } from "react";
import { isApiError, postStream } from "../api/client";
import { sessionEnded } from "../api/query-client";
import { applyEvent, endedEarly, IDLE, type RunState, started } from "./run-state";
import { readEvents } from "./sse";

/**
 * One run at a time on one side of the playground: `start` posts and reads the stream as it arrives (each
 * event re-renders, so tokens show one by one), `stop` aborts the request, which frees the provider's
 * connection on the server. Leaving the page stops it too.
 */
export function useRun() {
  const [state, setState] = useState<RunState>(IDLE);
  const controller = useRef<AbortController | null>(null);

  const stop = useCallback(() => {
    const running = controller.current;
    if (!running) return;
    controller.current = null;
    running.abort();
    setState((s) => (s.status === "running" ? { ...s, status: "stopped" } : s));
  }, []);

  const start = useCallback(async (path: string, body: unknown) => {
    controller.current?.abort();
    const mine = new AbortController();
    controller.current = mine;
    setState(started());
    const stillMine = () => controller.current === mine;
    try {
      const response = await postStream(path, body, mine.signal);
      let current = started();
      for await (const event of readEvents(response.body as ReadableStream<Uint8Array>)) {
        if (!stillMine()) return;
        current = applyEvent(current, event);
        setState(current);
      }
      if (stillMine()) setState(endedEarly(current));
    } catch (error) {
      if (!stillMine()) return;
      if (isApiError(error) && error.status === 401) sessionEnded(error);
      setState((s) => ({
        ...s,
        status: "error",
        error: isApiError(error)
          ? { code: "request_failed", message: error.message, status: error.status }
          : // The body broke off mid-read (the server went, the network dropped).
            {
              code: "stream_ended",
              message: "The answer stopped before it was complete: the connection was lost.",
              status: null,
            },
      }));
    } finally {
      if (stillMine()) controller.current = null;
    }
  }, []);

  useEffect(() => () => controller.current?.abort(), []);
  return { state, start, stop, reset: () => setState(IDLE) };
}
