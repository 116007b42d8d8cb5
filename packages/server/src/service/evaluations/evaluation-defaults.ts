/**
 * A prompt's evaluation defaults (docs/evaluations.md, "Default checks"): the check set, and optionally the
 * dataset, that an evaluation of the prompt starts from in the dashboard, saved once by an editor for everyone
 * (and read by any surface). Reading needs `read`, saving `write`, as the prompt's other settings. The check set
 * is checked as an evaluation's is (its shape, names, patterns); what it names elsewhere (a judge prompt, a
 * webhook endpoint) is resolved when an evaluation starts, so a default never pins a judge's version.
 */
import type { Check } from "@promptstore/core/evaluations/checks";
import type { EvaluationDefaultsBody, EvaluationDefaultsView } from "@promptstore/core/evaluations/evaluations";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import type { DefaultsRow, EvaluationStore } from "../../store/evaluations/evaluations.js";
import { now } from "../../store/ids.js";
import { auditActor, type Caller, requireAccess } from "../access.js";
import { authorShownTo } from "../authors.js";
import type { PromptService } from "../prompts/prompt-service.js";
import type { DatasetResolver } from "./evaluation-service.js";

/** The audit trail's pointer at a check set: the start of its canonical JSON's hash. */
const setHash = (checks: string): string => sha256Hex(canonical(JSON.parse(checks))).slice(0, 12);

export class EvaluationDefaults {
  constructor(
    private readonly store: EvaluationStore,
    private readonly prompts: Pick<PromptService, "listVersions">,
    private readonly datasets: DatasetResolver,
  ) {}

  async get(caller: Caller, promptId: string): Promise<EvaluationDefaultsView> {
    requireAccess(caller, "read", "reading evaluation defaults");
    // The prompt first: an unknown prompt is a 404, not "no defaults".
    await this.prompts.listVersions(caller, promptId);
    return this.view(caller, promptId, await this.store.defaults(caller.projectId, promptId));
  }

  async save(caller: Caller, promptId: string, body: EvaluationDefaultsBody): Promise<EvaluationDefaultsView> {
    requireAccess(caller, "write", "saving evaluation defaults");
    await this.prompts.listVersions(caller, promptId);
    // A dataset of another project, or none, is refused as an evaluation's would be (`dataset: … not found`).
    if (body.dataset) await this.datasets.resolve(caller, body.dataset);
    const before = await this.store.defaults(caller.projectId, promptId);
    const row: DefaultsRow = {
      project_id: caller.projectId,
      prompt_id: promptId,
      checks: JSON.stringify(body.checks),
      dataset_id: body.dataset ?? null,
      updated_at: now(),
      updated_by: auditActor(caller),
    };
    try {
      await this.store.saveDefaults(row, [
        {
          orgId: caller.orgId,
          projectId: caller.projectId,
          at: row.updated_at,
          actor: auditActor(caller),
          action: "evaluation.defaults_saved",
          target: promptId,
          before: before === undefined ? null : setHash(before.checks),
          after: setHash(row.checks),
        },
      ]);
    } catch (error) {
      // The prompt was deleted meanwhile (the row's foreign key refused it): its 404, not a 500.
      await this.prompts.listVersions(caller, promptId);
      throw error;
    }
    return this.view(caller, promptId, row);
  }

  private view(caller: Caller, promptId: string, row: DefaultsRow | undefined): EvaluationDefaultsView {
    if (row === undefined)
      return { prompt_id: promptId, checks: null, dataset: null, updated_at: null, updated_by: null };
    return {
      prompt_id: promptId,
      checks: JSON.parse(row.checks) as Check[],
      dataset: row.dataset_id,
      updated_at: row.updated_at,
      updated_by: authorShownTo(caller, row.updated_by),
    };
  }
}
