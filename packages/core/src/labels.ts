/**
 * Labels (environments) and gradual rollouts: the names a label may have, and the sticky assignment of a
 * read to a rollout's arm. The assignment is documented (docs/releases.md) with test vectors, so that any
 * client computes the same arm as the server; the TypeScript and Python clients keep copies, pinned by the
 * same vectors.
 */

/** A label's name: lowercase, a letter first, up to 32 characters. */
export const LABEL_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** A label name in a version reference: one that is not all hexadecimal (that would be a prefix). */
export const LABEL_REF = "(?![0-9a-f]+$)[a-z][a-z0-9_-]{0,31}";

/** The label every prompt has (the contract's `production_version`); it cannot be removed. */
export const PRODUCTION = "production";

/** Why a name cannot be a label, or undefined when it can. */
export function labelNameProblem(name: string): string | undefined {
  if (!LABEL_NAME.test(name)) {
    return "must start with a lowercase letter and hold only a-z, 0-9, _ and -, 32 characters at most";
  }
  // A read's `version` would take it for a version prefix.
  if (/^[0-9a-f]+$/.test(name)) return "must not be made only of hexadecimal characters";
  if (name === "latest") return "latest is not a label: it always names the newest version";
  return undefined;
}

/** Whether a read's `version` names a label (rather than latest, a hash or a prefix). */
export function isLabelRef(ref: string): boolean {
  return labelNameProblem(ref) === undefined;
}

/** Rollout percentages are whole numbers: 1 to 99 while running; 100 completes one. */
export const ROLLOUT_PERCENT = { min: 1, max: 100 } as const;

/** How long a read's `assign` value may be. */
export const ASSIGN_MAX_LENGTH = 200;

/** The arm of a rollout a read was given: the label's current version, or the candidate. */
export type RolloutArm = "current" | "candidate";

/**
 * MurmurHash3, x86 32-bit, of the bytes given, with seed 0: small, fast, the same in every language
 * (Unleash assigns its gradual rollouts with it too).
 */
export function murmur3(bytes: Uint8Array, seed = 0): number {
  return murmur3Of(bytes.length, (i) => bytes[i] as number, seed);
}

/** murmur3 over `length` bytes that `at` gives: the bytes of an array, or an ASCII string's char codes. */
function murmur3Of(length: number, at: (i: number) => number, seed: number): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed >>> 0;
  const tail = length & ~3;
  for (let i = 0; i < tail; i += 4) {
    let k = at(i) | (at(i + 1) << 8) | (at(i + 2) << 16) | (at(i + 3) << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  switch (length & 3) {
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: the reference algorithm falls through
    case 3:
      k ^= at(tail + 2) << 16;
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: the reference algorithm falls through
    case 2:
      k ^= at(tail + 1) << 8;
    case 1:
      k ^= at(tail);
      k = Math.imul(k, c1);
      k = (k << 15) | (k >>> 17);
      k = Math.imul(k, c2);
      h ^= k;
  }
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const utf8 = new TextEncoder();

/**
 * Where an assign value falls, 0 to 9999: murmur3 of the UTF-8 of `<prompt id>/<label>/<assign>`, modulo
 * 10 000. The same prompt, label and value always fall in the same place, whatever the percent, so raising
 * a rollout from 10 to 50 keeps the first 10% on the candidate.
 */
export function rolloutBucket(promptId: string, label: string, assign: string): number {
  const text = `${promptId}/${label}/${assign}`;
  // ASCII (the usual ids and assign values) is its own UTF-8: hashed as it is, without the encoder's copy,
  // which cost a rollout read a tenth of its throughput.
  if (isAscii(text)) return murmur3Of(text.length, (i) => text.charCodeAt(i), 0) % 10_000;
  return murmur3(utf8.encode(text)) % 10_000;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** The arm a read with this assign value gets in a rollout of `percent` (candidate below percent × 100). */
export function rolloutArm(promptId: string, label: string, assign: string, percent: number): RolloutArm {
  return rolloutBucket(promptId, label, assign) < percent * 100 ? "candidate" : "current";
}
