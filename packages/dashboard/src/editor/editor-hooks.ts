import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { useBlocker } from "react-router";
import { keys } from "../api/queries";
import { clearDraft, type RescuedDraft, stashDraft } from "./rescue";

/**
 * If the editor closes because the session ended, keeps the unsaved draft (null: nothing unsaved) for after
 * signing back in (rescue.ts); an editor that opens clears what was kept.
 */
export function useDraftRescue(projectId: string, promptId: string, unsaved: () => RescuedDraft | null): void {
  const client = useQueryClient();
  const latest = useRef(unsaved);
  latest.current = unsaved;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once; reads the latest values through the ref
  useEffect(() => {
    clearDraft(projectId, promptId);
    return () => {
      const draft = latest.current();
      if (draft === null || client.getQueryData(keys.session) !== null) return;
      stashDraft(projectId, promptId, draft);
    };
  }, []);
}

/** Leaving with unsaved changes asks first: inside the app through the router, and on reload or close. */
export function useLeaveGuard(dirty: boolean) {
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      dirty &&
      currentLocation.pathname !== nextLocation.pathname &&
      // The prompt was just deleted (DeletePromptDialog): there is nothing left to save the edits to.
      (nextLocation.state as { deleted?: unknown } | null)?.deleted !== true,
  );
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      event.returnValue = "";
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);
  return blocker;
}
