import { LRUCache } from "lru-cache";
import type { KeyGrant } from "../../store/accounts/tenants.js";
import { DatabaseUnavailable } from "../../store/faults.js";
import type { ChangeBus } from "../events/change-bus.js";

/**
 * Resolves API keys with an in-process cache, so a hot read path does not query the database for its key.
 * Revocations and plan changes announced on the bus clear it at once; the TTL bounds how long a change
 * made by another process that cannot announce it (the CLI on SQLite) can go unseen.
 *
 * While the change channel is down (`deaf`) a revocation elsewhere would go unheard, so every key is looked
 * up in the database; the grants known when it went down are kept aside, for when the database cannot
 * answer (no revocation can be written then either), until the `reset` that ends the outage.
 */
export class KeyCache {
  private readonly grants: LRUCache<string, KeyGrant>;
  /** When each key's last use was last written, per key id. */
  private readonly touched = new Map<string, number>();
  /** Moves on at every clear: a lookup that started before a revocation must not cache what it found. */
  private generation = 0;
  private deaf = false;
  private readonly lastKnown = new Map<string, KeyGrant>();

  constructor(
    private readonly lookup: (key: string) => Promise<KeyGrant | undefined>,
    bus: ChangeBus,
    options: {
      ttlMs?: number;
      max?: number;
      /** Records a key's use; called at most once a minute per key, never awaited by the request. */
      onUse?: (keyId: string, at: string) => Promise<void>;
    } = {},
  ) {
    this.grants = new LRUCache({ max: options.max ?? 10_000, ttl: options.ttlMs ?? 10_000 });
    this.onUse = options.onUse;
    bus.subscribe((change) => {
      if (change.kind === "tenants" || change.kind === "reset") {
        this.generation++;
        this.grants.clear();
        this.lastKnown.clear();
        if (change.kind === "reset") this.deaf = false;
      } else if (change.kind === "deaf") {
        // Expired ones too (dump): an outage may outlast the TTL, and nothing can be revoked while it lasts.
        for (const [key, entry] of this.grants.dump()) this.lastKnown.set(key, entry.value);
        this.generation++;
        this.grants.clear();
        this.deaf = true;
      }
    });
  }

  /**
   * A hit answers synchronously: the hot path then awaits nothing. Entries are keyed by the key itself
   * (the request carries it in memory anyway); hashing it on every request cost 5% of a cached read.
   * Keys stay SHA-256 at rest.
   */
  /** The cached grant, if any, without touching the database. */
  peek(key: string): KeyGrant | undefined {
    const grant = this.grants.get(key);
    if (grant) this.used(grant);
    return grant;
  }

  resolve(key: string): KeyGrant | Promise<KeyGrant | undefined> {
    const grant = this.grants.get(key);
    if (!grant) return this.load(key);
    this.used(grant);
    return grant;
  }

  private async load(key: string): Promise<KeyGrant | undefined> {
    const generation = this.generation;
    let grant: KeyGrant | undefined;
    try {
      grant = await this.lookup(key);
    } catch (error) {
      const kept = error instanceof DatabaseUnavailable ? this.lastKnown.get(key) : undefined;
      if (!kept) throw error;
      return kept;
    }
    // Misses are not cached: a key created a moment ago by the CLI must work at once.
    if (grant) {
      if (generation === this.generation && !this.deaf) this.grants.set(key, grant);
      this.used(grant);
    }
    return grant;
  }

  private readonly onUse: ((keyId: string, at: string) => Promise<void>) | undefined;

  /** A minute's resolution is what "last used" needs; a write per request would halve cached reads. */
  private used(grant: KeyGrant): void {
    if (!this.onUse) return;
    const at = Date.now();
    const last = this.touched.get(grant.keyId);
    if (last !== undefined && at - last < 60_000) return;
    if (this.touched.size >= 10_000) this.touched.clear();
    this.touched.set(grant.keyId, at);
    this.onUse(grant.keyId, new Date(at).toISOString()).catch(() => this.touched.delete(grant.keyId));
  }
}
