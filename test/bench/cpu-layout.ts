/**
 * Where `npm run bench:llm` puts its processes. On a small machine the service, the fake
 * provider and the clients compete for the same cores, and the service's loop delay then counts
 * the time it waited for one while the others ran. Pinned, the service (this process, every
 * thread: main, write worker, GC and thread pool) gets the first allowed CPU and the fake
 * server and the clients the others, so the loop delay measures the service on a core of its
 * own. Linux with util-linux's `taskset` and at least two allowed CPUs; otherwise (or with
 * BENCH_LLM_PIN=0) nothing is pinned and the layout says why.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** The processes' placement, as planned and applied. */
export interface CpuLayout {
  /** Whether the processes are pinned (false: they share every CPU, see `description`). */
  readonly pinned: boolean;
  /** One line saying which CPUs each side got, or why nothing is pinned. */
  readonly description: string;
  /** Pins this process (all its threads) to the service's CPU. */
  pinService(): void;
  /** Pins a helper process (the fake server, the clients: all their threads) to the others. */
  pinHelper(pid: number | undefined): void;
}

/**
 * The CPUs this process may run on, from `Cpus_allowed_list` of /proc/self/status ("0-3,6");
 * undefined when that is unreadable (not Linux).
 */
export function allowedCpus(status?: string): number[] | undefined {
  let text = status;
  try {
    text ??= readFileSync('/proc/self/status', 'latin1');
  } catch {
    return undefined;
  }
  const line = /^Cpus_allowed_list:\s*(\S+)/m.exec(text)?.[1];
  if (line === undefined) return undefined;
  const cpus: number[] = [];
  for (const part of line.split(',')) {
    const [from, to] = part.split('-').map(Number);
    if (from === undefined || !Number.isInteger(from)) return undefined;
    for (let cpu = from; cpu <= (to ?? from); cpu++) cpus.push(cpu);
  }
  return cpus;
}

function taskset(args: string[]): void {
  execFileSync('taskset', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function unpinned(why: string): CpuLayout {
  return {
    pinned: false,
    description: `not pinned (${why}): the service, the fake server and the clients share every CPU, so the loop delay includes the service's waits for one`,
    pinService: () => undefined,
    pinHelper: () => undefined,
  };
}

/** Plans the layout; nothing is pinned until `pinService` / `pinHelper` are called. */
export function planCpuLayout(env: NodeJS.ProcessEnv = process.env): CpuLayout {
  if (env.BENCH_LLM_PIN === '0') return unpinned('BENCH_LLM_PIN=0');
  const cpus = allowedCpus();
  if (cpus === undefined) {
    return unpinned(`no CPU affinity list here; ${availableParallelism()} CPU(s)`);
  }
  if (cpus.length < 2) return unpinned(`only CPU ${cpus.join(',')} is available`);
  try {
    taskset(['-p', String(process.pid)]);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return unpinned(code === 'ENOENT' ? 'taskset (util-linux) not found' : `taskset failed`);
  }
  const [first, ...rest] = cpus;
  const service = String(first);
  const helpers = rest.join(',');
  return {
    pinned: true,
    description: `service on CPU ${service}; fake server and clients on CPU ${helpers} (taskset)`,
    pinService: () => taskset(['-a', '-p', '-c', service, String(process.pid)]),
    pinHelper: (pid) => {
      if (pid !== undefined) taskset(['-a', '-p', '-c', helpers, String(pid)]);
    },
  };
}
