/**
 * @promptstore/client: the Promptstore SDK. No runtime dependencies; `fetch`-based (Node.js 20+, Bun, Deno,
 * browsers, edge runtimes). See README.md.
 */
export {
  type CacheMode,
  type CallOptions,
  type ClientStatus,
  type GetOptions,
  type PromptChange,
  Promptstore,
  type PromptstoreOptions,
  type StreamState,
} from "./client.js";
export {
  MissingVariablesError,
  PromptstoreError,
  type PromptstoreErrorDetails,
  PromptstoreNetworkError,
  PromptstoreTimeoutError,
  UnexpectedVariablesError,
} from "./errors.js";
export type { paths as ApiPaths } from "./generated/api-types.js";
export type { FetchLike } from "./http.js";
export { readEventStream, type SseHandlers, type SseMessage, SseParser } from "./sse.js";
export type * from "./types.js";
export { type Fillable, type FillOptions, fill, type VariableValue, variablesOf } from "./variables.js";
