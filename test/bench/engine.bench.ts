// Engine benchmark (`npm run bench`): µs per no-op step on chain-200, fan-out-1000 + join and
// lattice 20×20 for a bare-Promise counting scheduler (the floor), the native engine and the
// graph engine — raw engine actor and through createRuntime({persist:false}).run() — plus heap
// per 1000 concurrent 5-step diamond runs. Medians of repeated runs after warm-up. Not a test.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor } from 'xstate';
import type {
  AttemptResult,
  AttemptRunner,
  EngineAdapter,
  EngineInput,
} from '../../src/engine/adapter.js';
import { graphAdapter } from '../../src/engine/adapters/graph.js';
import { nativeAdapter } from '../../src/engine/adapters/native.js';
import { createRuntime } from '../../src/index.js';
import { compileWorkflow } from '../../src/workflow/index.js';
import type { CompiledWorkflow, StepDocument, WorkflowDocument } from '../../src/workflow/types.js';

const QUICK = process.argv.includes('--quick');
const WARMUP = QUICK ? 3 : 10;
const REPEATS = QUICK ? 5 : 15;

// ---- shapes -------------------------------------------------------------------------------
function doc(name: string, steps: StepDocument[]): WorkflowDocument {
  return { name, steps };
}
const step = (name: string, deps: string[] = []): StepDocument => ({
  name,
  agent: 'tier0_echo',
  ...(deps.length > 0 ? { depends_on: deps } : {}),
});
function chain(n: number): WorkflowDocument {
  return doc(
    'chain',
    Array.from({ length: n }, (_, i) => step(`s${i}`, i > 0 ? [`s${i - 1}`] : [])),
  );
}
function fanOut(n: number): WorkflowDocument {
  const leaves = Array.from({ length: n }, (_, i) => step(`f${i}`, ['root']));
  return doc('fan', [
    step('root'),
    ...leaves,
    step(
      'join',
      leaves.map((s) => s.name),
    ),
  ]);
}
function lattice(w: number): WorkflowDocument {
  const steps: StepDocument[] = [];
  for (let r = 0; r < w; r++)
    for (let c = 0; c < w; c++) {
      const deps: string[] = [];
      if (r > 0) deps.push(`n${r - 1}_${c}`);
      if (c > 0) deps.push(`n${r}_${c - 1}`);
      steps.push(step(`n${r}_${c}`, deps));
    }
  return doc('lattice', steps);
}
function diamond(): WorkflowDocument {
  return doc('diamond', [
    step('a'),
    step('b', ['a']),
    step('c', ['a']),
    step('d', ['a']),
    step('e', ['b', 'c', 'd']),
  ]);
}

// ---- floor: a minimal bare-Promise counting scheduler --------------------------------------
const OK: AttemptResult = {
  ok: true,
  output: {},
  error: null,
  modelUsed: null,
  tokensUsed: null,
  iterations: 1,
};
const noop = (): Promise<AttemptResult> => Promise.resolve(OK);

function floorRun(wf: CompiledWorkflow): Promise<void> {
  return new Promise((resolve) => {
    const steps = wf.steps;
    const n = steps.length;
    const pending = Int32Array.from(steps, (s) => s.dependsOnIndex.length);
    let done = 0;
    const start = (i: number): void => {
      void noop().then(() => {
        done++;
        for (const d of steps[i]!.dependentsIndex) if (--pending[d]! === 0) start(d);
        if (done === n) resolve();
      });
    };
    for (let i = 0; i < n; i++) if (pending[i] === 0) start(i);
  });
}

// ---- engines ------------------------------------------------------------------------------
const clock = {
  now: () => Date.now(),
  setTimeout: (cb: () => void, ms: number): unknown => setTimeout(cb, ms),
  clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
};
function engineInput(wf: CompiledWorkflow, runAttempt: AttemptRunner): EngineInput {
  return {
    runId: 'bench',
    workflow: wf,
    inputs: {},
    maxConcurrency: wf.steps.length,
    maxAttempts: 1,
    runAttempt,
    retryDelayMs: () => 0,
    clock,
  };
}
function engineRun(
  adapter: EngineAdapter,
  wf: CompiledWorkflow,
  runAttempt: AttemptRunner = noop,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const actor = createActor(adapter.createLogic(wf), { input: engineInput(wf, runAttempt) });
    let finished = 0;
    actor.on('step.finished', () => finished++);
    actor.subscribe({
      next: (s: { status: string }) => {
        if (s.status !== 'done') return;
        if (finished !== wf.steps.length) reject(new Error(`${finished} step.finished`));
        else resolve();
      },
      error: reject,
    });
    actor.start();
  });
}

async function median(n: number, once: () => Promise<void>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t = process.hrtime.bigint();
    await once();
    times.push(Number(process.hrtime.bigint() - t) / 1e3 / n);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

// ---- heap ---------------------------------------------------------------------------------
const gc = (globalThis as { gc?: () => void }).gc;
function heapMiB(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

/** Heap of 1000 diamond runs in flight (every step blocked on a gate), then after they end. */
async function diamondHeap(adapter: EngineAdapter): Promise<{ during: number; after: number }> {
  const wf = compileWorkflow(diamond());
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const blocked: AttemptRunner = () => gate.then(() => OK);
  await engineRun(adapter, wf); // warm the machine and code paths
  const base = heapMiB();
  const runs: Promise<void>[] = [];
  for (let i = 0; i < 1000; i++) runs.push(engineRun(adapter, wf, blocked));
  const during = heapMiB() - base;
  open();
  await Promise.all(runs);
  const after = heapMiB() - base;
  return { during, after };
}

async function runtimeHeap(adapter: 'native' | 'graph', runsDir: string) {
  const runtime = createRuntime({ persist: false, runsDir, maxConcurrency: 10 });
  const wfDoc: WorkflowDocument = {
    name: 'diamond_sleep',
    steps: [
      { name: 'a', agent: 'tier0_sleep', inputs: { ms: 60_000 } },
      { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
      { name: 'c', agent: 'tier0_echo', depends_on: ['a'] },
      { name: 'd', agent: 'tier0_echo', depends_on: ['a'] },
      { name: 'e', agent: 'tier0_echo', depends_on: ['b', 'c', 'd'] },
    ],
  };
  await runtime.run({ workflow: diamond(), adapter });
  const base = heapMiB();
  const handles = [];
  for (let i = 0; i < 1000; i++) handles.push(await runtime.start({ workflow: wfDoc, adapter }));
  const during = heapMiB() - base;
  for (const h of handles) runtime.cancel(h.runId);
  await Promise.all(handles.map((h) => h.done));
  const after = heapMiB() - base;
  await runtime.shutdown({ graceMs: 0 });
  return { during, after };
}

// ---- main ---------------------------------------------------------------------------------
interface Row {
  shape: string;
  engine: string;
  us: number;
  ratio: number;
  target: string;
}

async function main(): Promise<void> {
  const started = Date.now();
  const runsDir = await mkdtemp(join(tmpdir(), 'agentic-bench-'));
  const shapes: [string, WorkflowDocument][] = [
    ['chain-200', chain(200)],
    ['fan-out-1000 + join', fanOut(1000)],
    ['lattice 20x20', lattice(20)],
  ];
  const rows: Row[] = [];
  try {
    for (const [label, shape] of shapes) {
      const wf = compileWorkflow(shape);
      const n = wf.steps.length;
      const floor = await median(n, () => floorRun(wf));
      const add = (engine: string, us: number, target: number | null) =>
        rows.push({
          shape: label,
          engine,
          us,
          ratio: us / floor,
          target: target === null ? '' : `≤ ${target}× ${us / floor <= target ? 'met' : 'MISSED'}`,
        });
      add('floor (bare Promise)', floor, null);
      add('native, engine actor', await median(n, () => engineRun(nativeAdapter, wf)), 25);
      add('graph, engine actor', await median(n, () => engineRun(graphAdapter, wf)), 50);
      const runtime = createRuntime({ persist: false, runsDir, maxConcurrency: n });
      for (const adapter of ['native', 'graph'] as const) {
        const us = await median(n, async () => {
          const record = await runtime.run({ workflow: shape, adapter });
          if (record.status !== 'success') throw new Error(`${adapter} run ${record.status}`);
        });
        add(`${adapter}, createRuntime().run()`, us, adapter === 'native' ? 25 : 50);
      }
      await runtime.shutdown({ graceMs: 0 });
    }

    console.log(`\nµs per no-op step, median of ${REPEATS} runs after ${WARMUP} warm-up runs`);
    console.log(
      `${'shape'.padEnd(21)} ${'engine'.padEnd(30)} ${'µs/step'.padStart(9)} ${'× floor'.padStart(9)}  target`,
    );
    for (const r of rows)
      console.log(
        `${r.shape.padEnd(21)} ${r.engine.padEnd(30)} ${r.us.toFixed(3).padStart(9)} ${r.ratio.toFixed(1).padStart(9)}  ${r.target}`,
      );

    console.log(
      `\nheap per 1000 concurrent 5-step diamond runs (MiB; target ≤ 8)${gc ? '' : '  [no --expose-gc: numbers are rough]'}`,
    );
    for (const adapter of [nativeAdapter, graphAdapter]) {
      const h = await diamondHeap(adapter);
      console.log(
        `${`${adapter.name}, engine actor`.padEnd(30)} during ${h.during.toFixed(2).padStart(7)}  after end ${h.after.toFixed(2).padStart(6)}  ${h.during <= 8 ? 'met' : 'MISSED'}`,
      );
    }
    for (const adapter of ['native', 'graph'] as const) {
      const h = await runtimeHeap(adapter, runsDir);
      console.log(
        `${`${adapter}, createRuntime().start()`.padEnd(30)} during ${h.during.toFixed(2).padStart(7)}  after end ${h.after.toFixed(2).padStart(6)}  ${h.during <= 8 ? 'met' : 'MISSED'}`,
      );
    }
  } finally {
    await rm(runsDir, { recursive: true, force: true });
  }
  console.log(`\nbench took ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

await main();
