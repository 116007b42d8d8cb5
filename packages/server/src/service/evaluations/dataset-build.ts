import type { AuditAction } from "@promptstore/core/audit";
import { badRequest, conflict } from "@promptstore/core/errors";
import { caseId, caseJson, DatasetHasher, type NormalCase } from "@promptstore/core/evaluations/cases";
import type { SavedDataset } from "@promptstore/core/evaluations/dataset-views";
import { shortHash } from "@promptstore/core/version-ref";
import type { NewAuditEntry } from "../../store/audit.js";
import {
  type DatasetRow,
  DatasetStore,
  type DatasetVersionRow,
  type StoredCase,
} from "../../store/evaluations/datasets.js";
import { now } from "../../store/ids.js";
import { auditActor, type Caller } from "../access.js";

/**
 * How a dataset version is built (docs/evaluations.md, "Datasets"): in a stage of the store, page by page,
 * hashed as it is written, then named by its hash, so no version is ever held whole. DatasetService decides
 * who may and what goes in; this writes it.
 */

/** A case to write, with what names it in a refusal (`cases[3]`, `line 12`). */
export interface Labeled {
  label: string;
  value: NormalCase;
}

/** How a build starts and what it is guarded by. */
export interface BuildPlan {
  /** An append: the base version, whose cases come first. */
  base?: DatasetVersionRow | undefined;
  /** Refuse (409) when the head is no longer this when the version is committed. */
  expectHead?: string | null | undefined;
  /** The dataset is being created: its first version. */
  first?: boolean;
  message: string | null;
  /** Names a new case by its index among the new ones, for a repeat's refusal. */
  labelOf(index: number): string;
}

/** Cases written per stage page, and bytes: whichever comes first. */
export const PAGE_CASES = 500;
const PAGE_BYTES = 4 * 1024 * 1024;
/**
 * Writes a version in a stage, a page at a time, hashing each case as it goes (after the base's, for an
 * append), then names it by its hash. Any refusal or failure drops the stage and the bodies only it held.
 */
export async function buildVersion(
  store: DatasetStore,
  caller: Caller,
  dataset: DatasetRow,
  input: AsyncIterable<Labeled>,
  plan: BuildPlan,
  limits: { maxCases: number; sweep: (datasetId: string) => Promise<void> },
): Promise<SavedDataset> {
  await limits.sweep(dataset.id);
  const stage = DatasetStore.newStage();
  const hasher = new DatasetHasher();
  const baseCount = plan.base ? Number(plan.base.case_count) : 0;
  try {
    if (plan.base) {
      for (let after = -1; ; ) {
        const page = await store.page(dataset.id, plan.base.hash, after, PAGE_CASES);
        if (page.length === 0) break;
        for (const c of page) hasher.add(c.body);
        after = (page[page.length - 1] as { position: number }).position;
      }
      await store.stageCopy(dataset.id, plan.base.hash, stage);
    }
    let pending: StoredCase[] = [];
    let pendingBytes = 0;
    let written = baseCount;
    const flush = async () => {
      await store.stageCases(dataset.id, stage, written, pending);
      written += pending.length;
      pending = [];
      pendingBytes = 0;
    };
    for await (const item of input) {
      if (hasher.size >= limits.maxCases) {
        throw badRequest(`${item.label}: a dataset version holds at most ${limits.maxCases} cases`);
      }
      const body = caseJson(item.value);
      hasher.add(body);
      pending.push({ case_id: caseId(body), body });
      pendingBytes += body.length;
      if (pending.length >= PAGE_CASES || pendingBytes >= PAGE_BYTES) await flush();
    }
    await flush();
    const repeat = await store.repeatedCase(dataset.id, stage);
    if (repeat) {
      const second = plan.labelOf(repeat.second - baseCount);
      throw badRequest(
        repeat.first < baseCount
          ? `${second}: repeats case ${repeat.first} of version ${shortHash(plan.base?.hash ?? "")}; a case is in a version once`
          : `${second}: repeats ${plan.labelOf(repeat.first - baseCount)}; a case is in a version once`,
      );
    }
    const hash = hasher.digest();
    const at = now();
    const done = await store.commitStage(
      dataset.id,
      stage,
      {
        hash,
        case_count: hasher.size,
        parent: dataset.head,
        message: plan.message,
        created_at: at,
        created_by: caller.actor,
      },
      {
        ...(plan.expectHead === undefined ? {} : { expectHead: plan.expectHead }),
        audit: ({ created, previousHead }) => {
          if (plan.first) return [datasetAudit(caller, "dataset.created", dataset.id, null, hash, at)];
          if (created) return [datasetAudit(caller, "dataset.version_created", dataset.id, previousHead, hash, at)];
          if (previousHead !== hash) {
            return [datasetAudit(caller, "dataset.head_moved", dataset.id, previousHead, hash, at)];
          }
          return [];
        },
      },
    );
    if ("headMoved" in done) {
      throw conflict(
        `base: the dataset changed while this version was built; its head is now ${done.headMoved ?? "none"}`,
      );
    }
    return { id: dataset.id, version: hash, created: done.created, cases: hasher.size };
  } catch (error) {
    await store.dropStage(dataset.id, stage);
    await store.deleteOrphanCases(dataset.id);
    throw error;
  }
}

export function datasetAudit(
  caller: Caller,
  action: AuditAction,
  target: string,
  before: string | null,
  after: string | null,
  at: string,
): NewAuditEntry {
  return {
    orgId: caller.orgId,
    projectId: caller.projectId,
    at,
    actor: auditActor(caller),
    action,
    target,
    before,
    after,
  };
}
