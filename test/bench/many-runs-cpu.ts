// CPU per run of the many-runs case (issue 26.7), builds compared in one process (not a test):
// `node --expose-gc --import tsx test/bench/many-runs-cpu.ts [dir ...]` loads each compiled tree
// (relative to the package root, default `dist`), then runs rounds of MANY concurrent 5-step
// no-op diamond runs through `createRuntime({persist:false}).run()`, the builds alternating
// round by round, and prints per build the median process CPU (user + system) per run and, from
// the second build on, the median of the per-pair ratios to the first with p25–p75. Both builds
// share the machine's load of the moment, so the ratio is steadier than wall time on a shared
// machine. Options: `--listener` (the service's shape: an event listener on the runtime),
// `--graph` (the graph adapter), `--rounds=N`, `--many=N`, `--show` (every round). With one tree it is also what
// `node --cpu-prof` profiles (only that case runs).
import type * as IndexModule from '../../src/index.js';
import type { WorkflowDocument } from '../../src/workflow/types.js';

const arg = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const trees = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (trees.length === 0) trees.push('dist');
const LISTENER = process.argv.includes('--listener');
const ADAPTER = process.argv.includes('--graph') ? 'graph' : 'native';
const ROUNDS = Number(arg('rounds') ?? 20);
const MANY = Number(arg('many') ?? 2000);
const WARMUP = 3;

const workflow: WorkflowDocument = {
  name: 'diamond',
  steps: [
    { name: 'a', agent: 'tier0_echo' },
    { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
    { name: 'c', agent: 'tier0_echo', depends_on: ['a'] },
    { name: 'd', agent: 'tier0_echo', depends_on: ['a'] },
    { name: 'e', agent: 'tier0_echo', depends_on: ['b', 'c', 'd'] },
  ],
};

const builds = await Promise.all(
  trees.map(async (tree) => {
    const url = new URL(`../../${tree.replace(/\/+$/, '')}/src/index.js`, import.meta.url);
    const { createRuntime } = (await import(url.href)) as typeof IndexModule;
    const runtime = createRuntime({ persist: false, maxConcurrency: 5, maxActiveRuns: MANY });
    if (LISTENER) runtime.subscribe(() => undefined);
    return { tree, runtime, cpu: [] as number[] };
  }),
);

async function batch(build: (typeof builds)[number]): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.cpuUsage();
  const runs = new Array<Promise<{ status: string }>>(MANY);
  for (let i = 0; i < MANY; i++) runs[i] = build.runtime.run({ workflow, adapter: ADAPTER });
  for (const record of await Promise.all(runs)) {
    if (record.status !== 'success') throw new Error(`run ${record.status}`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / MANY;
}

for (let i = 0; i < WARMUP; i++) for (const build of builds) await batch(build);
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < builds.length; k++) {
    const build = builds[(k + round) % builds.length]!;
    build.cpu.push(await batch(build));
  }
}

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const q = (values: readonly number[], p: number) =>
  sorted(values)[Math.min(values.length - 1, Math.floor(p * values.length))]!;
console.log(
  `${MANY} concurrent 5-step runs, ${ADAPTER} run()${LISTENER ? ' + listener' : ''}, ${ROUNDS} rounds: CPU µs per run, median (p25–p75)`,
);
for (const build of builds) {
  const line = `${build.tree.padEnd(20)} ${q(build.cpu, 0.5).toFixed(1)} (${q(build.cpu, 0.25).toFixed(1)}–${q(build.cpu, 0.75).toFixed(1)})`;
  if (build === builds[0]) {
    console.log(line);
    continue;
  }
  const ratios = build.cpu.map((c, i) => c / builds[0]!.cpu[i]!);
  console.log(
    `${line}  ÷ ${builds[0]!.tree}: ${q(ratios, 0.5).toFixed(3)} (${q(ratios, 0.25).toFixed(3)}–${q(ratios, 0.75).toFixed(3)})`,
  );
}
if (process.argv.includes('--show'))
  for (const b of builds) console.log(b.tree, b.cpu.map((c) => c.toFixed(0)).join(' '));
for (const build of builds) await build.runtime.shutdown({ graceMs: 0 });
