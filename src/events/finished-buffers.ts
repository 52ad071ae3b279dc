import { LRUCache } from 'lru-cache';
import type { WorkflowEvent } from '../generated/events.js';

/** Finished runs whose buffers are kept (`AGENTIC_FINISHED_BUFFERS`). */
export const DEFAULT_FINISHED_BUFFERS = 1000;
/** Serialized bytes all finished runs' buffers may hold (`AGENTIC_FINISHED_BUFFERS_MAX_BYTES`). */
export const DEFAULT_FINISHED_BUFFERS_MAX_BYTES = 64 * 1024 * 1024;

export interface FinishedBuffersOptions<V> {
  /** Buffers kept at most. @default 1000 */
  maxEntries?: number;
  /** Serialized bytes kept at most, over all buffers. @default 64 MiB */
  maxBytes?: number;
  /** The events a value holds (what is weighed). */
  eventsOf: (value: V) => readonly WorkflowEvent[];
  /**
   * A value dropped to make room, or refused because it alone is over `maxBytes`; not called
   * for {@link FinishedBuffers.delete} or {@link FinishedBuffers.clear}.
   */
  onDrop: (value: V) => void;
}

/**
 * The replay buffers of finished runs: an LRU bounded both by count and by the serialized size
 * of the events held, so a few runs with large inputs cannot hold gigabytes (measured: with a
 * count bound alone, 900 KB inputs reached a 3.1 GB plateau). The size is the JSON a client
 * would receive, weighed once when a buffer is kept (at `workflow_end`, and again for each
 * later evaluation event). A buffer over the whole budget is not kept: late joiners of that run
 * get the sequence rebuilt from its run file.
 */
export class FinishedBuffers<V extends object> {
  private readonly cache: LRUCache<string, V>;
  private readonly weights = new WeakMap<V, number>();
  private readonly eventsOf: (value: V) => readonly WorkflowEvent[];
  private readonly onDrop: (value: V) => void;

  constructor(options: FinishedBuffersOptions<V>) {
    this.eventsOf = options.eventsOf;
    this.onDrop = options.onDrop;
    this.cache = new LRUCache<string, V>({
      max: Math.max(1, options.maxEntries ?? DEFAULT_FINISHED_BUFFERS),
      maxSize: Math.max(1, options.maxBytes ?? DEFAULT_FINISHED_BUFFERS_MAX_BYTES),
      sizeCalculation: (value) => this.weights.get(value) ?? 1,
      dispose: (value, _key, reason) => {
        if (reason === 'evict') this.onDrop(value);
      },
    });
  }

  /**
   * Keeps (or re-weighs) `value` under `key` as the most recently used. Returns false, after
   * calling `onDrop`, when it alone is over the byte budget.
   */
  keep(key: string, value: V): boolean {
    this.weights.set(value, Math.max(1, weigh(this.eventsOf(value))));
    // lru-cache re-weighs only a new value: take the old entry out first.
    this.cache.delete(key);
    this.cache.set(key, value);
    if (this.cache.peek(key) === value) return true;
    this.onDrop(value);
    return false;
  }

  peek(key: string): V | undefined {
    return this.cache.peek(key);
  }

  delete(key: string): void {
    this.cache.delete(key);
  }

  values(): IterableIterator<V> {
    return this.cache.values();
  }

  clear(): void {
    this.cache.clear();
  }

  /** Buffers kept. */
  get size(): number {
    return this.cache.size;
  }

  /** Serialized bytes held by the kept buffers. */
  get bytes(): number {
    return this.cache.calculatedSize;
  }
}

/** UTF-8 bytes of the events as JSON frames. */
function weigh(events: readonly WorkflowEvent[]): number {
  let bytes = 0;
  for (const event of events) bytes += Buffer.byteLength(JSON.stringify(event), 'utf8');
  return bytes;
}
