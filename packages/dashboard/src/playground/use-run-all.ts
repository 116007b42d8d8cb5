import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { isApiError, postStream } from "../api/client";
import { exampleKeys, promptBase } from "../api/example-queries";
import { keys } from "../api/queries";
import { sessionEnded } from "../api/query-client";
import type { DraftContent, ExampleResult, ModelSettings, RunError } from "./run-types";
import { readEvents } from "./sse";

export interface RunAllState {
  status: "idle" | "running" | "done" | "error" | "stopped";
  /** The hashes the references resolved to, in the order asked. */
  versions: { ref: string; version: string }[];
  /** Keyed `exampleId version`. */
  results: Record<string, { result: ExampleResult; kept: boolean }>;
  errors: Record<string, RunError>;
  summary: { ran: number; kept: number; failed: number } | null;
  error: string | null;
}

const IDLE: RunAllState = { status: "idle", versions: [], results: {}, errors: {}, summary: null, error: null };

export const cellKey = (exampleId: string, version: string) => `${exampleId} ${version}`;

export interface RunAllBody {
  connection: string;
  versions: string[];
  /** The editor's unsaved draft, run as the first side. */
  draft?: DraftContent;
  model?: ModelSettings;
  guard?: boolean;
  fresh?: boolean;
}

/**
 * Runs every example against one or two versions (docs/playground.md, "Run all"): kept results arrive at
 * once, new ones as they finish. When it ends, the kept results and the history's counts are read again.
 */
export function useRunAll(projectId: string, promptId: string) {
  const client = useQueryClient();
  const [state, setState] = useState<RunAllState>(IDLE);
  const controller = useRef<AbortController | null>(null);

  const stop = useCallback(() => {
    controller.current?.abort();
    controller.current = null;
    setState((s) => (s.status === "running" ? { ...s, status: "stopped" } : s));
  }, []);

  const start = useCallback(
    async (body: RunAllBody) => {
      controller.current?.abort();
      const mine = new AbortController();
      controller.current = mine;
      let current: RunAllState = { ...IDLE, status: "running" };
      setState(current);
      try {
        const response = await postStream(`${promptBase(projectId, promptId)}/examples/run`, body, mine.signal);
        for await (const event of readEvents(response.body as ReadableStream<Uint8Array>)) {
          if (controller.current !== mine) return;
          let data: any;
          try {
            data = JSON.parse(event.data);
          } catch {
            continue;
          }
          if (event.event === "start") current = { ...current, versions: data.versions ?? [] };
          else if (event.event === "result") {
            current = {
              ...current,
              results: {
                ...current.results,
                [cellKey(data.example_id, data.version)]: { result: data.result, kept: data.kept === true },
              },
            };
          } else if (event.event === "error") {
            current = {
              ...current,
              errors: {
                ...current.errors,
                [cellKey(data.example_id, data.version)]: {
                  code: data.code,
                  message: data.message,
                  status: data.status ?? null,
                },
              },
            };
          } else if (event.event === "done") current = { ...current, status: "done", summary: data };
          setState(current);
        }
        if (controller.current === mine && current.status === "running") {
          setState({
            ...current,
            status: "error",
            error: "The run stopped before it was complete: the connection was lost.",
          });
        }
      } catch (error) {
        if (controller.current !== mine) return;
        if (isApiError(error) && error.status === 401) sessionEnded(error);
        setState({
          ...current,
          status: "error",
          error: isApiError(error) ? error.message : "The connection was lost.",
        });
      } finally {
        if (controller.current === mine) controller.current = null;
        // What was kept is now the server's: the columns and the history read it from there.
        void client.invalidateQueries({ queryKey: [...exampleKeys.list(projectId, promptId), "results"] });
        void client.invalidateQueries({ queryKey: keys.versions(projectId, promptId) });
      }
    },
    [client, projectId, promptId],
  );

  useEffect(() => () => controller.current?.abort(), []);
  return { state, start, stop };
}
