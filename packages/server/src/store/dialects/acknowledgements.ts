/** An instance listening for changes: its id, and the backend pid of its listening connection. */
export interface Listener {
  instance: string;
  pid: number;
}

interface Pending {
  /** Who acknowledged before the listeners were known (an announcement outside a transaction commits at once). */
  heard: Set<string>;
  /** Who has not acknowledged yet, by instance id: the pid they listened on. */
  waiting: Map<string, number>;
  /** What the change was, for the warning when the deadline passes. */
  what: string;
  /** Set once the writer waits (after commit). */
  done?: () => void;
  deadline?: NodeJS.Timeout;
}

export interface AcknowledgementOptions {
  timeoutMs: number;
  /** How often, while a writer waits, to ask which listeners are still connected. */
  pollMs: number;
  /** The listening connections that exist now. */
  present: () => Promise<Listener[]>;
  /** The deadline passed with `missing` still silent. */
  late: (what: string, missing: Listener[], timeoutMs: number) => void;
}

/**
 * The acknowledgements this process awaits for the changes it announced. A listener is done with once it
 * acknowledges, or once its listening connection is gone: an instance that died (or lost its connection,
 * and so dropped every cache) has nothing stale left to serve, and must not hold up this write or any
 * later one. Presence is asked only while a writer waits, never on a read.
 */
export class Acknowledgements {
  private readonly pending = new Map<string, Pending>();
  private polling: NodeJS.Timeout | undefined;

  constructor(private readonly options: AcknowledgementOptions) {}

  /** Before the change is notified: from then on its acknowledgements are collected, none lost. */
  open(id: string, what: string): void {
    this.pending.set(id, { heard: new Set(), waiting: new Map(), what });
  }

  /** Once the announcing statement says who listened. */
  expect(id: string, listeners: Listener[]): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    for (const l of listeners) if (!entry.heard.has(l.instance)) entry.waiting.set(l.instance, l.pid);
  }

  acknowledge(id: string, instance: string): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    entry.heard.add(instance);
    entry.waiting.delete(instance);
    if (entry.waiting.size === 0 && entry.done) this.finish(id, entry);
  }

  withdraw(id: string): void {
    const entry = this.pending.get(id);
    if (entry) this.finish(id, entry);
  }

  /** After commit: until every listener is done with, or the deadline. */
  wait(id: string): Promise<void> {
    const entry = this.pending.get(id);
    if (!entry) return Promise.resolve();
    if (entry.waiting.size === 0) {
      this.pending.delete(id);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      entry.done = resolve;
      entry.deadline = setTimeout(() => {
        const missing = [...entry.waiting].map(([instance, pid]) => ({ instance, pid }));
        this.finish(id, entry);
        this.options.late(entry.what, missing, this.options.timeoutMs);
      }, this.options.timeoutMs);
      this.poll();
    });
  }

  private finish(id: string, entry: Pending): void {
    clearTimeout(entry.deadline);
    this.pending.delete(id);
    entry.done?.();
  }

  /** One poll at a time for all writers waiting, and none when nobody waits. */
  private poll(): void {
    if (this.polling) return;
    this.polling = setTimeout(async () => {
      try {
        const present = new Set((await this.options.present()).map((l) => `${l.instance}/${l.pid}`));
        for (const [id, entry] of this.pending) {
          if (!entry.done) continue;
          for (const [instance, pid] of entry.waiting) {
            if (!present.has(`${instance}/${pid}`)) entry.waiting.delete(instance);
          }
          if (entry.waiting.size === 0) this.finish(id, entry);
        }
      } catch {
        // Our own connection is down and says so itself; the deadline still bounds the wait.
      } finally {
        this.polling = undefined;
        if ([...this.pending.values()].some((entry) => entry.done)) this.poll();
      }
    }, this.options.pollMs);
  }
}
