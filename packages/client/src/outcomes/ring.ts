/**
 * A bounded first-in first-out buffer over a circular array: adding at the end, taking from the front and
 * putting back at the front are O(1) per item, and a full buffer gives up its oldest item.
 */
export class Ring<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  size = 0;

  constructor(readonly capacity: number) {}

  /** Adds an item at the end. When the buffer is full its oldest item is dropped: returned true. */
  push(item: T): boolean {
    if (this.items.length === 0) this.items = new Array(this.capacity);
    if (this.size === this.capacity) {
      this.items[this.head] = item;
      this.head = (this.head + 1) % this.capacity;
      return true;
    }
    this.items[(this.head + this.size) % this.capacity] = item;
    this.size++;
    return false;
  }

  /** The oldest item, or undefined when empty. */
  first(): T | undefined {
    return this.size === 0 ? undefined : this.items[this.head];
  }

  /** Takes up to `n` items from the front, oldest first. */
  take(n: number): T[] {
    const count = Math.min(n, this.size);
    const out = new Array<T>(count);
    for (let i = 0; i < count; i++) {
      out[i] = this.items[this.head] as T;
      this.items[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
    }
    this.size -= count;
    return out;
  }

  /**
   * Puts items taken earlier back at the front, in their order. They are older than any item held, so when
   * they do not all fit, their oldest are the ones left out: returns how many were.
   */
  unshift(items: readonly T[]): number {
    if (this.items.length === 0) this.items = new Array(this.capacity);
    const room = this.capacity - this.size;
    const kept = Math.min(room, items.length);
    for (let i = items.length - 1; i >= items.length - kept; i--) {
      this.head = (this.head - 1 + this.capacity) % this.capacity;
      this.items[this.head] = items[i];
    }
    this.size += kept;
    return items.length - kept;
  }
}
