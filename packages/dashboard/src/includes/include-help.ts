import { useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useMemo, useRef } from "react";
import { useNavigate } from "react-router";
import { fetchPromptPage, promptViewQuery } from "../api/queries";
import type { IncludeHelp } from "../editor/code/include-support";

/** What a section editor needs for includes: the project, the pins kept from the version edited, and help. */
export interface IncludeEditing {
  projectId: string;
  pins: Readonly<Record<string, string>>;
  help: IncludeHelp;
}

export const IncludeEditingContext = createContext<IncludeEditing | null>(null);

export const useIncludeContext = () => useContext(IncludeEditingContext);

export const promptHref = (projectId: string, promptId: string) =>
  `/p/${projectId}/prompts/${encodeURIComponent(promptId)}`;

/** The editor's include help: completion from the project's prompts, their labels and sections; jumps by route. */
export function useIncludeEditing(projectId: string, promptId: string, pins: Record<string, string>): IncludeEditing {
  const client = useQueryClient();
  const navigate = useNavigate();
  const pinsRef = useRef(pins);
  pinsRef.current = pins;
  const pinsKey = JSON.stringify(pins);
  // biome-ignore lint/correctness/useExhaustiveDependencies: pinsKey stands for pins
  return useMemo(() => {
    const latest = (id: string) => client.fetchQuery(promptViewQuery(projectId, id, "latest", false));
    const help: IncludeHelp = {
      async prompts(q) {
        const page = await fetchPromptPage(projectId, q, 1, 20);
        return page.prompts.filter((p) => p.id !== promptId).map((p) => ({ id: p.id, name: p.name }));
      },
      async labels(id) {
        const view = await latest(id);
        const others = Object.keys(view.labels).filter((l) => l !== "production");
        return ["production", "latest", ...others.sort()];
      },
      async sections(id) {
        const view = await latest(id);
        return [
          ...new Set(view.sections.filter((s) => s.enabled && !/[@{}]/.test(s.title)).map((s) => s.title.trim())),
        ];
      },
      pins: () => pinsRef.current,
      open: (id) => navigate(promptHref(projectId, id)),
    };
    return { projectId, pins, help };
  }, [client, navigate, projectId, promptId, pinsKey]);
}
