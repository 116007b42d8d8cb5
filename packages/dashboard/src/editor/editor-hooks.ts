import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { useBlocker } from "react-router";
import { keys } from "../api/queries";
import { evaluatePath, holdDraft } from "./held-draft";
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

/**
 * Leaving with unsaved changes asks first: inside the app through the router, and on reload or close. `carries`
 * names the addresses the unsaved changes go to without asking (the prompt's Edit and Evaluate tabs, which hold
 * the draft between them: held-draft.ts); `onLeave` hears every address a navigation is headed for.
 */
export function useLeaveGuard(
  dirty: boolean,
  carries: (pathname: string) => boolean = () => false,
  onLeave: (pathname: string) => void = () => {},
) {
  const blocker = useBlocker(({ currentLocation, nextLocation }) => {
    onLeave(nextLocation.pathname);
    return (
      dirty &&
      currentLocation.pathname !== nextLocation.pathname &&
      !carries(nextLocation.pathname) &&
      // The prompt was just deleted (DeletePromptDialog): there is nothing left to save the edits to.
      (nextLocation.state as { deleted?: unknown } | null)?.deleted !== true
    );
  });
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

/**
 * The editor's unsaved draft goes with its person to the prompt's Evaluate tab (held-draft.ts): when the editor
 * closes on the way there, the draft is held; on any other way out (the person chose to leave it, the prompt
 * was deleted) whatever was held is dropped. Returns what the leave guard hears of each navigation.
 */
export function useCarryDraft(projectId: string, promptId: string, unsaved: () => RescuedDraft | null) {
  const latest = useRef(unsaved);
  latest.current = unsaved;
  const headedFor = useRef<string | null>(null);
  const evaluate = evaluatePath(projectId, promptId);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once; reads the latest values through the refs
  useEffect(
    () => () => {
      const draft = latest.current();
      holdDraft(projectId, promptId, draft !== null && headedFor.current === evaluate ? draft : null);
    },
    [],
  );
  return {
    carries: (pathname: string) => pathname === evaluate,
    onLeave: (pathname: string) => {
      headedFor.current = pathname;
    },
  };
}
