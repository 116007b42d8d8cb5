/**
 * @promptstore/client: the Promptstore SDK. No runtime dependencies; `fetch`-based (Node.js 20+, Bun, Deno,
 * browsers, edge runtimes). See README.md.
 */
export { describeProductionDifferences, type ProductionDifference, productionDifferences } from "./check.js";
export { Promptstore } from "./client.js";
export {
  MissingVariablesError,
  PromptstoreError,
  type PromptstoreErrorDetails,
  PromptstoreNetworkError,
  PromptstoreTimeoutError,
  UnexpectedVariablesError,
} from "./errors.js";
export type { DatasetExport, DatasetFileFormat, DatasetImportOptions, Datasets } from "./evaluations/datasets.js";
export type { Evaluations, WaitOptions } from "./evaluations/evaluations.js";
export type { paths as ApiPaths } from "./generated/api-types.js";
export type { FetchLike, RawBody } from "./http.js";
export type {
  CacheMode,
  CallOptions,
  ClientStatus,
  GetOptions,
  OutcomeOptions,
  PromptChange,
  PromptstoreOptions,
  StreamState,
} from "./options.js";
export type { OutcomeReport, OutcomeStats } from "./outcomes/outcome.js";
export { type RolloutArm, rolloutArm, rolloutBucket } from "./rollout.js";
export { readEventStream, type SseHandlers, type SseMessage, SseParser } from "./sse.js";
export type * from "./types.js";
export { type Fillable, type FillOptions, fill, type VariableValue, variablesOf } from "./variables.js";
