/**
 * A fixed-capacity circular buffer: `push` is O(1) and, once full, overwrites the oldest
 * entry. The replay buffer of a run (spec: "a circular in-process buffer of 500 events").
 * Storage grows with use up to the capacity, so the many short runs (a handful of events
 * each) do not each hold 500 slots.
 */
export class RingBuffer<T> {
  readonly capacity: number;
  private readonly slots: (T | undefined)[];
  /** Index of the oldest entry. */
  private head = 0;
  private count = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`RingBuffer capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    this.slots = [];
  }

  /** Number of entries held (at most {@link capacity}). */
  get size(): number {
    return this.count;
  }

  /** Appends an entry; when full, the oldest entry is dropped. */
  push(item: T): void {
    if (this.count < this.capacity) {
      // Until the buffer is first full, head is 0 and the entries are slots[0..count).
      this.slots.push(item);
      this.count += 1;
      return;
    }
    this.slots[this.head] = item;
    this.head = (this.head + 1) % this.capacity;
  }

  /** The newest entry, or undefined when empty. */
  last(): T | undefined {
    if (this.count === 0) return undefined;
    return this.slots[(this.head + this.count - 1) % this.capacity];
  }

  /** The entries, oldest first (a copy). */
  toArray(): T[] {
    const out = new Array<T>(this.count);
    for (let i = 0; i < this.count; i += 1) {
      out[i] = this.slots[(this.head + i) % this.capacity] as T;
    }
    return out;
  }

  /** Drops every entry. */
  clear(): void {
    this.slots.length = 0;
    this.head = 0;
    this.count = 0;
  }
}
