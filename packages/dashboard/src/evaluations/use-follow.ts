/**
 * Follows a running evaluation (docs/evaluations.md, "Progress and stop"): its progress stream
 * (`GET …/evaluations/:id/events`, SSE) moves the bar as answers are judged, and its `done` event is the whole
 * evaluation. The numbers and the cases are read again at most every few seconds while it runs, so a long
 * evaluation shows its results as they come. A stream that cannot be opened or breaks falls back to reading the
 * evaluation every two seconds until it has ended.
 */
import type { EvaluationView } from "@promptstore/core/evaluations/evaluations";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { ApiError } from "../api/client";
import { evaluationKeys, evaluationPath, evaluationQuery } from "../api/evaluation-queries";
import { sessionEnded } from "../api/query-client";
import { readEvents } from "../playground/sse";

/** How often, at most, a running evaluation's numbers and cases are read again. */
const REFRESH_MS = 3000;
const POLL_MS = 2000;

export function useFollowEvaluation(projectId: string, promptId: string, view: EvaluationView | undefined): void {
  const client = useQueryClient();
  const id = view?.id;
  const running = view?.status === "running";
  useEffect(() => {
    if (id === undefined || !running) return;
    const controller = new AbortController();
    const { signal } = controller;
    const key = evaluationKeys.one(projectId, id);
    let refreshed = 0;
    const refresh = (force = false) => {
      if (!force && Date.now() - refreshed < REFRESH_MS) return;
      refreshed = Date.now();
      void client.invalidateQueries({ queryKey: key, exact: true });
      void client.invalidateQueries({ queryKey: [...key, "cases"] });
    };
    const ended = (whole: EvaluationView) => {
      const { cases: _cases, ...rest } = whole as EvaluationView & { cases?: unknown };
      client.setQueryData(key, rest as EvaluationView);
      void client.invalidateQueries({ queryKey: [...key, "cases"] });
      void client.invalidateQueries({ queryKey: evaluationKeys.list(projectId, promptId) });
    };
    const poll = async () => {
      while (!signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        if (signal.aborted) return;
        try {
          const latest = await client.fetchQuery({ ...evaluationQuery(projectId, id), staleTime: 0 });
          if (latest.status !== "running") return ended(latest);
          void client.invalidateQueries({ queryKey: [...key, "cases"] });
        } catch (error) {
          sessionEnded(error);
          if (error instanceof ApiError && error.status === 401) return;
        }
      }
    };
    const follow = async () => {
      let response: Response;
      try {
        response = await fetch(`${evaluationPath(projectId, id)}/events`, {
          headers: { accept: "text/event-stream" },
          credentials: "same-origin",
          signal,
        });
      } catch {
        if (!signal.aborted) void poll();
        return;
      }
      if (response.status === 401) return sessionEnded(new ApiError(401, "The session ended."));
      if (!response.ok || !response.body) return void poll();
      try {
        for await (const event of readEvents(response.body)) {
          if (event.event === "progress") {
            const data = JSON.parse(event.data) as Pick<EvaluationView, "status" | "progress">;
            client.setQueryData<EvaluationView>(key, (old) => (old ? { ...old, progress: data.progress } : old));
            refresh();
          } else if (event.event === "done") {
            return ended(JSON.parse(event.data) as EvaluationView);
          } else if (event.event === "error") break;
        }
      } catch {
        // A broken stream: read the evaluation instead.
      }
      if (!signal.aborted) void poll();
    };
    void follow();
    return () => controller.abort();
  }, [client, projectId, promptId, id, running]);
}
