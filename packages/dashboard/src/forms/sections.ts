/** A section being edited: the stored fields plus a key that stays with it while it is moved. */
export interface DraftSection {
  key: number;
  title: string;
  content: string;
  enabled: boolean;
}

let lastKey = 0;

export function draftSection(section: Partial<Omit<DraftSection, "key">> = {}): DraftSection {
  lastKey += 1;
  return { key: lastKey, title: section.title ?? "", content: section.content ?? "", enabled: section.enabled ?? true };
}

/** The body form of sections: what is validated, sent and compared. */
export const sectionsBody = (sections: readonly Omit<DraftSection, "key">[]) =>
  sections.map(({ title, content, enabled }) => ({ title, content, enabled }));

/** The list with the item at `from` moved to `to`; the same list when either is out of range. */
export function moveItem<T>(list: readonly T[], from: number, to: number): T[] {
  if (from === to || from < 0 || to < 0 || from >= list.length || to >= list.length) return [...list];
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item as T);
  return next;
}
