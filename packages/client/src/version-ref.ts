/**
 * A version's full hash, as the server writes it: the client's one home for it. The client has no runtime
 * dependency, so this mirrors core's `version-ref.ts`; a core test holds the two equal.
 */
export const FULL_HASH = /^[0-9a-f]{64}$/;
