/**
 * How much of a process's main-thread time went to given code, read from a V8 CPU profile
 * (`node --cpu-prof`). Each sample is charged to the innermost frame of its stack that comes from
 * a script (the application's or a package's), the Node and V8 internals below it counting for
 * it: a sample counts for a part when that frame is from one of the part's files. So a part's
 * time is its own code and the runtime work it calls, not the code it calls back into (a Koa
 * middleware's `await next()` runs the whole rest of the request under its frame). Only samples
 * inside the given time windows count, and idle samples are left out: the shares are of the time
 * the thread was busy there.
 *
 * Why a profile and not only the A/B of two services: on a shared machine, whole-service figures
 * (runs/s, CPU per run) move ±10 % between windows of the same service, more than the few per
 * cent a metrics library costs; the profile's attribution is taken inside one process, from the
 * same windows, and its sampling error shrinks with the sample count. It misses the indirect
 * costs (the garbage its allocations cause, reported here as the GC share of each process to
 * compare, and anything done outside the part's files on its behalf), so it is a floor that the
 * A/B figures bound from above.
 */
import { readFileSync } from 'node:fs';

/** The parts of a V8 `.cpuprofile` read here. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  /** When the profile began, µs on the monotonic clock (CLOCK_MONOTONIC on Linux). */
  startTime: number;
  samples: number[];
  /** µs since the previous sample (the first: since startTime). */
  timeDeltas: number[];
}

/** What {@link profileShare} found. */
export interface ProfileShare {
  /** Busy main-thread time inside the windows, ms. */
  busyMs: number;
  /** The garbage collector's part of it, ms (V8 reports its pauses as their own samples). */
  gcMs: number;
  /** Per part: the time charged to it inside the windows, ms. */
  parts: Record<string, number>;
  /** Samples inside the windows, idle ones included. */
  samples: number;
}

/**
 * Attributes the samples of the profile in `file` that fall inside `windows` (ms on the
 * monotonic clock, process.hrtime's, which is V8's profile clock on Linux) to `parts`: part name →
 * substrings of the script URLs that belong to it.
 */
export function profileShare(
  file: string,
  windows: readonly { from: number; to: number }[],
  parts: Record<string, readonly string[]>,
): ProfileShare {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // Each node's owner: the part whose files hold its script, `other` for any other script, or
  // undefined for Node's and V8's internals (no URL, or node:), which count for their caller.
  const ownerOf = (url: string): string | undefined => {
    if (url === '' || url.startsWith('node:')) return undefined;
    for (const [name, urls] of Object.entries(parts)) {
      if (urls.some((part) => url.includes(part))) return name;
    }
    return 'other';
  };
  const charged = new Map<number, string | undefined>();
  const chargedTo = (id: number): string | undefined => {
    if (charged.has(id)) return charged.get(id);
    const own = ownerOf(byId.get(id)?.callFrame.url ?? '');
    const up = parent.get(id);
    const found = own ?? (up === undefined ? undefined : chargedTo(up));
    charged.set(id, found);
    return found;
  };
  const sorted = [...windows].sort((a, b) => a.from - b.from);
  const inWindow = (ms: number): boolean => sorted.some((w) => ms >= w.from && ms <= w.to);
  const result: ProfileShare = {
    busyMs: 0,
    gcMs: 0,
    parts: Object.fromEntries(Object.keys(parts).map((name) => [name, 0])),
    samples: 0,
  };
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (!inWindow(at / 1000)) continue;
    result.samples += 1;
    const id = profile.samples[i]!;
    const name = byId.get(id)?.callFrame.functionName;
    if (name === '(idle)') continue;
    const ms = delta / 1000;
    result.busyMs += ms;
    if (name === '(garbage collector)') result.gcMs += ms;
    const part = chargedTo(id);
    if (part !== undefined && part in result.parts) result.parts[part] = result.parts[part]! + ms;
  }
  return result;
}
