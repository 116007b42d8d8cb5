/**
 * The editor's held draft (editor/held-draft.ts) as an evaluation sends it (`{ draft: { sections, tools?,
 * model? } }`) and as a save sends it (the editor's own body), or why it cannot be sent as it is.
 */
import type { SaveVersionBody } from "@promptstore/core/schemas";
import type { HeldDraft } from "../editor/held-draft";
import { checkModel } from "../editor/model-settings";
import { checkTools } from "../editor/tools";
import type { DraftContent } from "../playground/run-types";

export type DraftCheck = { ok: true; content: DraftContent } | { ok: false; problem: string };

export function draftContent(held: HeldDraft): DraftCheck {
  const tools = checkTools(held.tools);
  if (!tools.ok) return { ok: false, problem: tools.error };
  const model = checkModel(held.model ?? "");
  if (!model.ok) return { ok: false, problem: model.error };
  return {
    ok: true,
    content: {
      sections: held.sections,
      ...(tools.tools.length > 0 ? { tools: tools.tools } : {}),
      ...(model.model === undefined ? {} : { model: model.model }),
    },
  };
}

/** The body that saves the held draft as a version, from the version it started from (a 409 if latest moved). */
export function saveBody(held: HeldDraft, content: DraftContent, message: string): SaveVersionBody {
  return {
    name: held.name,
    description: held.description,
    sections: content.sections,
    tools: (content.tools ?? []) as SaveVersionBody["tools"],
    ...(content.model === undefined ? {} : { model: content.model as SaveVersionBody["model"] }),
    ...(message.trim() === "" ? {} : { message: message.trim() }),
    base_version: held.version,
  } as SaveVersionBody;
}
