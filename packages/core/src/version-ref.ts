/**
 * How a version is named: its hash (hash.ts computes it) or a prefix of it. Apart from hash.ts so that the
 * browser can use the patterns without Node's crypto.
 */

/** A version's hash: SHA-256 as 64 lowercase hex characters. */
export const FULL_HASH = /^[0-9a-f]{64}$/;

const PREFIX = "[0-9a-f]{7,64}";

/** A version given by its hash or a prefix of it, 7 characters at least (as git shortens). */
export const HASH_OR_PREFIX = new RegExp(`^${PREFIX}$`);

/** A hash, a prefix of one, or one of the named `pointers` (production, latest). */
export const refPattern = (...pointers: string[]): RegExp => new RegExp(`^(${[...pointers, PREFIX].join("|")})$`);

/** Whether a version reference is a whole hash (64 lowercase hex characters) rather than a prefix or pointer. */
export function isFullHash(ref: string): boolean {
  return FULL_HASH.test(ref);
}

/** How many characters of a hash the audit trail and the CLI show: enough to be unique in any history. */
export const SHORT_HASH_LENGTH = 12;

export const shortHash = (hash: string): string => hash.slice(0, SHORT_HASH_LENGTH);

/** An audit value or pointer as people read it: a full hash shortened, anything else (a scope, a plan) as is. */
export const readableRef = (value: string): string => (isFullHash(value) ? shortHash(value) : value);
