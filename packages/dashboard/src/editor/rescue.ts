/**
 * Unsaved edits outlive an ended session: when the editor is closed because the user was signed out
 * (a 401 sends them to Sign in), the draft is kept in sessionStorage and offered again after signing
 * back in, if the prompt's latest version is still the one it was based on.
 */
export interface RescuedDraft {
  version: string;
  name: string;
  description: string;
  sections: { title: string; content: string; enabled: boolean }[];
  tools: string;
  /** Absent in a draft kept before model settings existed. */
  model?: string;
  message: string;
}

const storageKey = (projectId: string, promptId: string) => `promptstore.draft.${projectId}.${promptId}`;

export function stashDraft(projectId: string, promptId: string, draft: RescuedDraft): void {
  try {
    sessionStorage.setItem(storageKey(projectId, promptId), JSON.stringify(draft));
  } catch {
    // Storage full or disabled: nothing more can be done for the draft.
  }
}

export function peekDraft(projectId: string, promptId: string, version: string): RescuedDraft | null {
  try {
    const raw = sessionStorage.getItem(storageKey(projectId, promptId));
    if (raw === null) return null;
    const draft = JSON.parse(raw) as RescuedDraft;
    return draft.version === version && Array.isArray(draft.sections) ? draft : null;
  } catch {
    return null;
  }
}

export function clearDraft(projectId: string, promptId: string): void {
  try {
    sessionStorage.removeItem(storageKey(projectId, promptId));
  } catch {
    // Nothing stored, then.
  }
}
