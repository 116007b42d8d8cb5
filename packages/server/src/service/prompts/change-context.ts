import type { ContentLimits } from "@promptstore/core/prompts/content-limits";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import type { LabelGate } from "./label-moves.js";
import type { PromptChange } from "./prompt-changes.js";

/** What a change written outside PromptService (a create, an import, a label removed) needs of it. */
export interface ChangeContext {
  store: ProjectStore;
  limits: ContentLimits;
  record(tx: ProjectStore, change: PromptChange): Promise<void>;
  /** Tells this instance's caches, after commit. */
  changed(promptId: string): void;
  /** Production's required evaluation, if it has one. */
  gate: LabelGate;
}
