import { LRUCache } from "lru-cache";
import type { ChangeBus } from "../../service/events/change-bus.js";
import { DatabaseUnavailable } from "../../store/faults.js";

/**
 * A read whose label has a rollout: the bytes of both arms, chosen per request by its assign value (or at
 * random), so one entry serves every reader of the label.
 */
export interface Arms {
  label: string;
  percent: number;
  current: Buffer;
  candidate: Buffer;
}

/** What the cache keeps for a read: its bytes, or both arms of a rollout. */
export type CachedRead = Buffer | Arms;

const sizeOf = (read: CachedRead): number =>
  Buffer.isBuffer(read) ? read.length : read.current.length + read.candidate.length;

/**
 * Resolved reads as the exact bytes sent, per project, prompt and variant (surface, version reference,
 * guard). Each prompt has a generation that a committed change bumps; a read takes the generation
 * before it queries, so a read racing a publish can only store its bytes under a generation that is
 * already dead. `production` and `latest` are therefore never served stale, and nothing is scanned to
 * invalidate.
 *
 * Concurrent misses for the same key share one read (single flight): when a publish sends a thousand
 * clients back for the new version at once, one of them reaches the database and the others wait for
 * its bytes. A request that arrives after the publish has a newer generation, so it never joins a read
 * that started before it.
 *
 * While the change channel is down (`deaf`), changes made by other instances are not heard: nothing is
 * served from memory then, and every read goes to the database. What was cached is kept aside, per
 * prompt and variant, and served only when the database cannot answer (a restart): no instance can
 * write meanwhile, so it is what the database last held. A change this instance hears drops its prompt's
 * share; the `reset` that ends the outage drops all of it.
 */
export class ReadCache {
  private readonly generations = new Map<string, number>();
  /** Moves on when changes may have been missed; part of every generation. */
  private epoch = 0;
  private readonly entries: LRUCache<string, CachedRead>;
  /** Reads in progress, by entry key; each leaves when it settles, failures included (never cached). */
  private readonly flights = new Map<string, Promise<CachedRead>>();
  /** True between `deaf` and the next `reset`: entries are neither served nor stored. */
  private deaf = false;
  /** While deaf: the last bytes known per prompt and variant, for when the database cannot answer. */
  private readonly lastKnown = new Map<string, Map<string, CachedRead>>();
  /** Lookups answered from memory, and those that went on to a read (joined flights included): the metrics. */
  hits = 0;
  misses = 0;
  /** Reads answered with last-known bytes because the database could not answer. */
  servedWhileUnavailable = 0;

  constructor(bus: ChangeBus, options: { maxBytes?: number } = {}) {
    this.entries = new LRUCache({
      maxSize: options.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (read, key) => sizeOf(read) + key.length,
    });
    bus.subscribe((change) => {
      if (change.kind === "reset") {
        // Every generation moves on, so reads in flight cannot store bytes that would be served later.
        this.epoch++;
        this.entries.clear();
        this.lastKnown.clear();
        this.deaf = false;
      } else if (change.kind === "deaf") {
        this.keepAside();
        this.epoch++;
        this.entries.clear();
        this.deaf = true;
      } else if (change.kind === "prompt") {
        const id = promptKey(change.projectId, change.promptId);
        this.generations.set(id, (this.generations.get(id) ?? 0) + 1);
        this.lastKnown.delete(id);
      }
    });
  }

  /** Take this before reading the database; pass it back to get and load. */
  generation(projectId: string, promptId: string): string {
    return `${this.epoch}.${this.generations.get(promptKey(projectId, promptId)) ?? 0}`;
  }

  get(projectId: string, promptId: string, generation: string, variant: string): CachedRead | undefined {
    const bytes = this.deaf ? undefined : this.entries.get(entryKey(projectId, promptId, generation, variant));
    if (bytes) this.hits++;
    else this.misses++;
    return bytes;
  }

  /** The bytes of a miss: joins the read in flight for the same key, or starts `read` and caches what it gives. */
  load(
    projectId: string,
    promptId: string,
    generation: string,
    variant: string,
    read: () => Promise<CachedRead>,
  ): Promise<CachedRead> {
    const key = entryKey(projectId, promptId, generation, variant);
    let flight = this.flights.get(key);
    if (!flight) {
      const id = promptKey(projectId, promptId);
      flight = read().catch((error) => {
        const kept = error instanceof DatabaseUnavailable ? this.lastKnown.get(id)?.get(variant) : undefined;
        if (!kept) throw error;
        this.servedWhileUnavailable++;
        return kept;
      });
      this.flights.set(key, flight);
      flight.then(
        (bytes) => {
          this.flights.delete(key);
          if (!this.deaf) this.entries.set(key, bytes);
          else if (generation === this.generation(projectId, promptId)) this.remember(id, variant, bytes);
        },
        () => this.flights.delete(key),
      );
    }
    return flight;
  }

  /** Sets aside what is cached for the current generation of each prompt (the key's parts, split). */
  private keepAside(): void {
    for (const [key, bytes] of this.entries.entries()) {
      const [projectId, promptId, generation, variant] = key.split("\u0000") as [string, string, string, string];
      if (generation === this.generation(projectId, promptId)) {
        this.remember(promptKey(projectId, promptId), variant, bytes);
      }
    }
  }

  private remember(id: string, variant: string, bytes: CachedRead): void {
    let variants = this.lastKnown.get(id);
    if (!variants) {
      variants = new Map();
      this.lastKnown.set(id, variants);
    }
    variants.set(variant, bytes);
  }
}

/** The variant of the usual read: v2, production, guard on. */
export const PRODUCTION_READ = "v2|production|true";

// NUL cannot occur in ids, so the parts cannot run into each other.
const promptKey = (projectId: string, promptId: string) => `${projectId}\u0000${promptId}`;
const entryKey = (projectId: string, promptId: string, generation: string, variant: string) =>
  `${projectId}\u0000${promptId}\u0000${generation}\u0000${variant}`;
