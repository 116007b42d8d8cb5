import { useQuery } from "@tanstack/react-query";
import { promptPageQuery } from "../api/queries";

/**
 * Suggestions for a field that takes a prompt's id: the project's prompts whose name or id holds what is typed
 * (the list's own search), as a `<datalist>` the field names by `id`. A project of 100 000 prompts sends 20.
 */
export function PromptSuggestions({ id, projectId, typed }: { id: string; projectId: string; typed: string }) {
  const page = useQuery({
    ...promptPageQuery(projectId, typed.trim(), 1, 20),
    placeholderData: (previous) => previous,
  });
  return (
    <datalist id={id}>
      {(page.data?.prompts ?? []).map((p) => (
        <option key={p.id} value={p.id}>
          {p.name}
        </option>
      ))}
    </datalist>
  );
}
