/**
 * The editor's unsaved draft, held in memory while its person goes from the Edit tab to Evaluate and back
 * (issue 38): the Evaluate screen evaluates it as "this draft" and can save it, and the editor shows it again
 * on return. Only that move keeps it: leaving the prompt asks first, as the editor always did, and leaving
 * discards it. A reload loses it (the page warns before), and a session that ends keeps it as the editor's own
 * rescue does (rescue.ts). Per prompt; nothing is written anywhere.
 */
import { useSyncExternalStore } from "react";
import type { RescuedDraft } from "./rescue";

/** The draft as the editor holds it: the version it started from, and every field as typed. */
export type HeldDraft = RescuedDraft;

const held = new Map<string, HeldDraft>();
const listeners = new Set<() => void>();
const keyOf = (projectId: string, promptId: string) => `${projectId}\u0000${promptId}`;

export function holdDraft(projectId: string, promptId: string, draft: HeldDraft | null): void {
  const key = keyOf(projectId, promptId);
  if (draft === null) {
    if (!held.has(key)) return;
    held.delete(key);
  } else held.set(key, draft);
  for (const listener of listeners) listener();
}

export function heldDraft(projectId: string, promptId: string): HeldDraft | null {
  return held.get(keyOf(projectId, promptId)) ?? null;
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** The held draft of a prompt, re-rendering when it is held, changed or dropped. */
export function useHeldDraft(projectId: string, promptId: string): HeldDraft | null {
  return useSyncExternalStore(subscribe, () => heldDraft(projectId, promptId));
}

/** The address of a prompt's Evaluate tab, the one place the editor's draft is carried to. */
export const evaluatePath = (projectId: string, promptId: string) =>
  `/p/${projectId}/prompts/${encodeURIComponent(promptId)}/evaluate`;
export const editPath = (projectId: string, promptId: string) =>
  `/p/${projectId}/prompts/${encodeURIComponent(promptId)}`;
