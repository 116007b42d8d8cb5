/**
 * What the datasets' routes answer (docs/evaluations.md, "Datasets"): one home for the server, which builds
 * them, and the dashboard, which shows them.
 */
import type { NormalCase } from "./cases.js";

/** A dataset in a list: its head version and how many cases that holds. */
export interface DatasetListItem {
  id: string;
  name: string;
  description: string | null;
  version: string;
  cases: number;
  created_at: string;
  updated_at: string;
}

/** One version of a dataset, as its history lists it. */
export interface DatasetVersionView {
  version: string;
  cases: number;
  /** The version it was made from (the head when it was saved), null for the first. */
  parent: string | null;
  message: string | null;
  saved_at: string;
  saved_by: string | null;
}

/** A dataset read at a version (the head unless one was asked for). */
export interface DatasetView extends DatasetVersionView {
  id: string;
  name: string;
  description: string | null;
  head: string;
  created_at: string;
  updated_at: string;
}

export interface CaseView {
  position: number;
  /** The SHA-256 of the case's canonical JSON: the same in every version that holds the case unchanged. */
  id: string;
  case: NormalCase;
}

/** A page of a version's cases; `next_after` continues, null on the last page. */
export interface CasePage {
  id: string;
  version: string;
  cases: CaseView[];
  next_after: number | null;
}

/** What a save answers: the version the dataset's head is now, and whether it is new. */
export interface SavedDataset {
  id: string;
  version: string;
  created: boolean;
  cases: number;
}

export interface CreatedDataset {
  id: string;
  name: string;
  version: string;
  cases: number;
  /** With from_examples: how many examples the prompt had (identical ones make one case). */
  examples?: number;
}
