/**
 * The ready queue of a scheduler: a binary min-heap of step indexes, so ready steps start in YAML
 * order, O(log n) per push and pop. It lives in a region of a number array the caller owns (from
 * `base`, one slot per step) and the caller keeps its size, so a run pays for no separate array
 * or object (see `step-slots.ts`).
 */

/** Adds `value` to the heap of `size` entries at `heap[base]…`; the caller then counts one more. */
export function heapPush(heap: number[], base: number, size: number, value: number): void {
  let i = size;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[base + parent]! <= value) break;
    heap[base + i] = heap[base + parent]!;
    i = parent;
  }
  heap[base + i] = value;
}

/**
 * Removes and returns the smallest entry; `size` is the heap's size after the removal (the caller
 * counts one less first), so `heap[base + size]` is the last entry.
 */
export function heapPop(heap: number[], base: number, size: number): number {
  const top = heap[base]!;
  const last = heap[base + size]!;
  let i = 0;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= size) break;
    if (child + 1 < size && heap[base + child + 1]! < heap[base + child]!) child++;
    if (heap[base + child]! >= last) break;
    heap[base + i] = heap[base + child]!;
    i = child;
  }
  heap[base + i] = last;
  return top;
}
