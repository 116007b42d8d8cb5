/**
 * Sticky rollout assignment, computed in the client (docs/releases.md): a copy of the server's function
 * (packages/core/src/labels.ts), kept in step by test/rollout.test.ts over the shared test vectors, since
 * the client may not depend on @promptstore/core at run time. With it, `get(id, { version, assign })`
 * serves either arm of a rollout from memory, without a request per read.
 */
import { PromptstoreError } from "./errors.js";
import type { PromptView } from "./types.js";

/**
 * Throws the 400 the server answers for an assign value it refuses (more than 200 characters, counted as
 * code points, or a NUL), so that a read served from memory fails as a read of the service would.
 */
export function checkAssign(assign: string | undefined): void {
  if (assign === undefined) return;
  let problem: string | undefined;
  if (assign.includes("\u0000")) problem = "assign: contains U+0000 (NUL), which cannot be stored";
  else if (assign.length > 200 && [...assign].length > 200) problem = "assign: must be at most 200 characters";
  if (problem !== undefined) throw new PromptstoreError(problem, { status: 400 });
}

/** The arm of a rollout a read gets: the label's current version, or the candidate. */
export type RolloutArm = "current" | "candidate";

/** MurmurHash3, x86 32-bit, seed 0 by default: the server's (packages/core/src/labels.ts). */
export function murmur3(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed >>> 0;
  const tail = bytes.length & ~3;
  for (let i = 0; i < tail; i += 4) {
    let k =
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  const rest = bytes.length & 3;
  if (rest === 3) k ^= (bytes[tail + 2] as number) << 16;
  if (rest >= 2) k ^= (bytes[tail + 1] as number) << 8;
  if (rest >= 1) {
    k ^= bytes[tail] as number;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const utf8 = new TextEncoder();

/** Where an assign value falls, 0 to 9999: murmur3 of the UTF-8 of `<prompt id>/<label>/<assign>`, mod 10 000. */
export function rolloutBucket(promptId: string, label: string, assign: string): number {
  return murmur3(utf8.encode(`${promptId}/${label}/${assign}`)) % 10_000;
}

/**
 * The arm a read gets in a rollout of `percent` on `label`: by its assign value (candidate when the bucket is
 * below percent × 100), or, without one, at random, as the server does.
 */
export function rolloutArm(promptId: string, label: string, percent: number, assign: string | undefined): RolloutArm {
  const bucket = assign === undefined ? Math.random() * 10_000 : rolloutBucket(promptId, label, assign);
  return bucket < percent * 100 ? "candidate" : "current";
}

/** The version the other arm of a held rollout read serves (its full hash), or undefined without a rollout. */
export function otherArmVersion(read: PromptView): string | undefined {
  const rollout = read.rollout;
  if (rollout === undefined || rollout === null) return undefined;
  // The label that served (production, or the fallback that served) is the one in the rollout.
  return rollout.arm === "current"
    ? rollout.candidate
    : (read.labels?.[read.label] ?? read.production_version ?? undefined);
}

/**
 * What the server answers for the other arm: the held read of the label with the content of `pinned` (that
 * arm's version, read by its hash with the same guard); the prompt's fields, labels and pointers are the
 * label read's, and `version` and `rollout.arm` name the arm.
 */
export function otherArmView(read: PromptView, pinned: PromptView): PromptView {
  const rollout = read.rollout as NonNullable<PromptView["rollout"]>;
  const arm: RolloutArm = rollout.arm === "current" ? "candidate" : "current";
  // Field by field in the order the server writes them (packages/server/src/http/reads/read-json.ts).
  // Tools and model settings are the version's content: the pinned arm's, or none.
  const { tools: _tools, model: _model, ...rest } = read;
  const view: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === "labels") {
      if (pinned.tools !== undefined) view.tools = pinned.tools;
      if (pinned.model !== undefined) view.model = pinned.model;
      view.labels = value;
    } else if (key === "prompt" || key === "sections" || key === "variables") view[key] = pinned[key];
    else if (key === "version") view.version = pinned.version;
    else if (key === "rollout") view.rollout = { ...rollout, arm };
    else view[key] = value;
  }
  return view as PromptView;
}

/** The composed read of the other arm, per held label read (a new read of the label gets a new one). */
const composed = new WeakMap<PromptView, PromptView>();

/** What serves a version by its full hash, held for good once read (PromptMemory). */
interface PinnedReads {
  get(promptId: string, ref: string, guard: boolean, watch: () => void): PromptView | Promise<PromptView>;
}

/**
 * The read `get()` serves for a held read of a label: the read itself without a rollout; in one, the arm the
 * assign value gets. The other arm's version is read once by its hash (kept for good, since a hash never
 * changes), as soon as the label's read is seen with a rollout, so that later calls make no request. The
 * label's read itself is read again on any event of its prompt (memory.ts), so a rollout changed, completed
 * or aborted is never served from memory.
 */
export function servedArm(
  memory: PinnedReads,
  promptId: string,
  guard: boolean,
  read: PromptView,
  assign: string | undefined,
  watch: () => void,
): PromptView | Promise<PromptView> {
  const other = otherArmVersion(read);
  if (other === undefined) return read;
  const rollout = read.rollout as NonNullable<PromptView["rollout"]>;
  const pinned = memory.get(promptId, other, guard, watch);
  if (rollout.arm === rolloutArm(promptId, read.label, rollout.percent, assign)) {
    // Held from now on for the next caller of the other arm; a failure is retried by that caller.
    if (pinned instanceof Promise) pinned.catch(() => {});
    return read;
  }
  return pinned instanceof Promise ? pinned.then((value) => compose(read, value)) : compose(read, pinned);
}

/**
 * When the service cannot answer: the arm the assign value gets of a read held (even out of date), if the
 * other arm's version is held too; else the read as held.
 */
export function heldArm(
  peek: (promptId: string, ref: string, guard: boolean) => PromptView | undefined,
  promptId: string,
  guard: boolean,
  read: PromptView,
  assign: string | undefined,
): PromptView {
  const other = otherArmVersion(read);
  if (other === undefined) return read;
  const rollout = read.rollout as NonNullable<PromptView["rollout"]>;
  if (rollout.arm === rolloutArm(promptId, read.label, rollout.percent, assign)) return read;
  const pinned = peek(promptId, other, guard);
  return pinned === undefined ? read : compose(read, pinned);
}

/** Whether two reads of a label are the same rollout, arms aside: the same two versions served. */
export function sameRollout(a: PromptView, b: PromptView): boolean {
  const currentOf = (read: PromptView) => (read.rollout?.arm === "current" ? read.version : otherArmVersion(read));
  return (
    a.rollout != null &&
    b.rollout != null &&
    a.label === b.label &&
    a.rollout.candidate === b.rollout.candidate &&
    currentOf(a) === currentOf(b)
  );
}

function compose(read: PromptView, pinned: PromptView): PromptView {
  let view = composed.get(read);
  if (view === undefined || view.version !== pinned.version) {
    view = Object.freeze(otherArmView(read, pinned));
    composed.set(read, view);
  }
  return view;
}
