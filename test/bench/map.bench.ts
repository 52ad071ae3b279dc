// Map benchmark (`npm run bench`, after engine.bench.ts; not a test). Issue 27.3: a 1,000-item map
// step against a 1,000-step fan-out on both engines, through createRuntime({persist:false}).run()
// (the user-facing path), µs per item vs µs per step (the target: the map within 2× the
// fan-out), then the heap after 100 runs of the map (forced GCs, run with --expose-gc).
//
// Both shapes run tier0_echo at the same concurrency (CONCURRENCY items or steps at once): the
// map is `list` (echoes the 1,000-item list) then one map step over it; the fan-out is `root`,
// 1,000 leaves depending on it and a join. Method as engine.bench.ts: warm-up, then ROUNDS
// rounds, each running every variant once in a rotating order; the figure is the median over
// the rounds, the ratio the median of (map ÷ fan-out of the same round and engine).
// `--quick` runs fewer rounds.
import type * as IndexModule from '../../src/index.js';
import type { StepDocument, WorkflowDocument } from '../../src/workflow/types.js';

const FROM = process.argv.includes('--src')
  ? new URL('../../', import.meta.url)
  : new URL(`../../${(process.env.BENCH_DIST ?? 'dist').replace(/\/+$/, '')}/`, import.meta.url);
const ext = process.argv.includes('--src') ? '.ts' : '.js';
const { createRuntime } = (await import(
  new URL(`src/index${ext}`, FROM).href
)) as typeof IndexModule;

const QUICK = process.argv.includes('--quick');
const ROUNDS = QUICK ? 5 : 15;
const N = 1000;
const CONCURRENCY = 10;
const HEAP_RUNS = 100;
const TARGET_RATIO = 2;
const ENGINES = ['native', 'graph'] as const;

function mapShape(n: number): WorkflowDocument {
  return {
    name: 'map_bench',
    inputs: { files: { type: 'array', default: Array.from({ length: n }, (_, i) => `f${i}`) } },
    steps: [
      { name: 'list', agent: 'tier0_echo', inputs: { files: '${inputs.files}' } },
      {
        name: 'each',
        for_each: '${steps.list.outputs.files}',
        as: 'file',
        max_concurrency: CONCURRENCY,
        agent: 'tier0_echo',
        depends_on: ['list'],
        inputs: { path: '${item.file}' },
      },
    ],
  };
}

function fanOutShape(n: number): WorkflowDocument {
  const leaves: StepDocument[] = Array.from({ length: n }, (_, i) => ({
    name: `f${i}`,
    agent: 'tier0_echo',
    depends_on: ['root'],
    inputs: { path: `f${i}` },
  }));
  return {
    name: 'fan_bench',
    steps: [
      { name: 'root', agent: 'tier0_echo' },
      ...leaves,
      { name: 'join', agent: 'tier0_echo', depends_on: leaves.map((s) => s.name) },
    ],
  };
}

const gc = (globalThis as { gc?: () => void }).gc;
function heapMiB(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const runtime = createRuntime({ persist: false, noLlm: true, maxConcurrency: CONCURRENCY });
  const shapes = { map: mapShape(N), fan: fanOutShape(N) };
  const once = async (shape: 'map' | 'fan', adapter: (typeof ENGINES)[number]): Promise<number> => {
    const start = performance.now();
    const record = await runtime.run({ workflow: shapes[shape], adapter });
    const ms = performance.now() - start;
    if (record.status !== 'success') throw new Error(`${shape} on ${adapter}: ${record.status}`);
    return ms;
  };
  const variants = ENGINES.flatMap((adapter) =>
    (['map', 'fan'] as const).map((shape) => ({ adapter, shape })),
  );
  for (const v of variants) for (let i = 0; i < 3; i++) await once(v.shape, v.adapter);
  const times = new Map<string, number[]>();
  const ratios = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    const got = new Map<string, number>();
    for (const v of order) {
      const key = `${v.adapter}/${v.shape}`;
      const ms = await once(v.shape, v.adapter);
      got.set(key, ms);
      (times.get(key) ?? times.set(key, []).get(key)!).push((ms * 1000) / N);
    }
    for (const adapter of ENGINES) {
      const ratio = got.get(`${adapter}/map`)! / got.get(`${adapter}/fan`)!;
      (ratios.get(adapter) ?? ratios.set(adapter, []).get(adapter)!).push(ratio);
    }
  }
  console.log(
    `\nmap of ${N} items vs fan-out of ${N} steps, ${CONCURRENCY} at once, createRuntime().run(), median of ${ROUNDS} rounds (target: map ≤ ${TARGET_RATIO}× fan-out)`,
  );
  for (const adapter of ENGINES) {
    const map = median(times.get(`${adapter}/map`)!);
    const fan = median(times.get(`${adapter}/fan`)!);
    const ratio = median(ratios.get(adapter)!);
    const verdict = ratio <= TARGET_RATIO ? 'ok' : 'OVER';
    console.log(
      `  ${adapter.padEnd(6)}  map ${map.toFixed(2)} µs/item   fan-out ${fan.toFixed(2)} µs/step   map ÷ fan-out ${ratio.toFixed(2)}  ${verdict}`,
    );
  }
  console.log(
    `\nheap MiB after ${HEAP_RUNS} runs of the ${N}-item map (vs after a warm-up run; target ≈ 0)${gc ? '' : '  [no --expose-gc: rough]'}`,
  );
  for (const adapter of ENGINES) {
    await once('map', adapter);
    const base = heapMiB();
    for (let i = 0; i < HEAP_RUNS; i++) await once('map', adapter);
    const after = heapMiB() - base;
    console.log(`  ${adapter.padEnd(6)}  ${after.toFixed(2)} MiB`);
  }
  await runtime.shutdown({ graceMs: 0 });
}

await main();
