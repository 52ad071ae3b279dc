// Sanitizer benchmark: the cost the sanitization middleware adds to a request, i.e.
// `sanitize()` on the parsed body plus the SHA-256 `input_hash` over the raw bytes (exactly
// what createSanitizer runs; JSON parsing belongs to the body parser and is not counted).
// Bodies are realistic: a run request with prose inputs and ids, a workflow YAML sent to the
// editor in `yaml_text`, a chat-like messages array, and a many-step document with digits,
// UUIDs, versions and dates. All of them must classify `clean`.
//
// Reports throughput (MiB/s, so >= 50 MiB/s is >= 50 MB/s) over a mix of body sizes, and the
// p50/p95/p99 latency for 64 KiB bodies, beside the targets (>= 50 MB/s, <= 2 ms p99). Wall
// time is the figure that counts; CPU time (process-wide, so it includes GC helper threads)
// is printed too because the machine is shared. Run with `npm run bench:sanitizer`.
import { loadavg } from 'node:os';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { sanitize } from '../../src/security/index.js';

const TARGET_MBPS = 50;
const TARGET_P99_MS = 2;
const LATENCY_SAMPLES = 3000;
const THROUGHPUT_MS = 3000;

const PROSE = [
  'The quarterly report shows revenue grew by 12% compared with the previous period, driven by the new subscription tier.',
  'Please review the attached pull request; the refactor removes redundant checks and adds guidance for new contributors.',
  'Der Bericht beschreibt die Architektur des Systems und die wichtigsten Entscheidungen der letzten Monate.',
  'Le système doit traiter les demandes en moins de deux secondes, même sous forte charge.',
  'Система обрабатывает запросы пользователей и сохраняет результаты в базе данных.',
  '这个工作流程会先分析代码，然后生成测试，最后给出审查意见。',
  'Deploy completed at 2024-05-17T10:22:31Z for build 1.14.2 (commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f).',
  'Team celebrated the launch 🎉👨‍👩‍👧‍👦 and shipped order #A-2024-000123 to the warehouse.',
  'Summarise the customer feedback from last week, group it by product area and flag anything that mentions safety or data loss.',
  'If the tests fail, ignore the flaky ones listed in the previous run and focus on the regression in the billing module.',
];

const CODE = `export async function fetchUser(id: string): Promise<User> {
  const response = await fetch(\`/api/users/\${id}\`, { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(\`request failed: \${response.status}\`);
  const token = process.env.API_TOKEN;
  return (await response.json()) as User;
}
def parse(lines):
    result = {}
    for i, line in enumerate(lines):
        key, _, value = line.partition('=')
        result[key.strip()] = value.strip()
    return result
`;

const YAML_STEP = (i: number): string => `  - name: step_${i}
    agent: tier${(i % 3) + 1}_worker
    depends_on: [step_${Math.max(0, i - 1)}]
    when: "\${steps.step_${Math.max(0, i - 1)}.status} == 'success'"
    inputs:
      prompt: "${PROSE[i % PROSE.length]?.replace(/"/g, "'")}"
      system_prompt: "You are a careful reviewer. Ignore formatting nits and redundant remarks."
      max_tokens: ${512 + (i % 8) * 128}
    outputs: { result: out_${i} }
    retry: { max_attempts: 3, backoff_ms: ${250 * ((i % 4) + 1)} }
`;

type Kind = 'run_request' | 'editor_yaml' | 'chat_messages' | 'steps_document';
const KINDS: readonly Kind[] = ['run_request', 'editor_yaml', 'chat_messages', 'steps_document'];

function uuid(i: number): string {
  const hex = (n: number, width: number): string =>
    (n >>> 0).toString(16).padStart(width, '0').slice(-width);
  return `${hex(i * 2654435761, 8)}-${hex(i, 4)}-4${hex(i * 7, 3)}-9${hex(i * 13, 3)}-${hex(i * 40503, 12)}`;
}

/** One body of about `targetBytes` bytes as a client would send it. */
function makeBody(kind: Kind, targetBytes: number, seed: number): unknown {
  const items: unknown[] = [];
  let size = 0;
  let i = seed;
  const push = (item: unknown): void => {
    size += JSON.stringify(item).length + 1;
    items.push(item);
  };
  switch (kind) {
    case 'run_request': {
      while (size < targetBytes) {
        i += 1;
        push({
          ticket_id: uuid(i),
          customer: `ACME-${100000 + i}`,
          summary: PROSE[i % PROSE.length],
          details: [PROSE[(i + 3) % PROSE.length], PROSE[(i + 5) % PROSE.length]],
          created_at: `2024-0${(i % 9) + 1}-1${i % 10}T0${i % 10}:15:00Z`,
          priority: i % 4,
          amount_eur: Math.round(i * 137.5) / 10,
        });
      }
      return { workflow: 'triage_tickets', input_data: { tickets: items, locale: 'en-GB' } };
    }
    case 'editor_yaml': {
      let yaml = `name: review_pipeline\ndescription: Review, test and summarise a change\nversion: "2.3.0"\ninputs:\n  diff: { type: string, required: true }\nsteps:\n`;
      while (yaml.length < targetBytes - 200) {
        i += 1;
        yaml += YAML_STEP(i);
      }
      return { name: 'review_pipeline', yaml_text: yaml, validate_only: false };
    }
    case 'chat_messages': {
      push({ role: 'system', content: 'You are a helpful assistant for the engineering team.' });
      while (size < targetBytes) {
        i += 1;
        push({ role: 'user', content: `${PROSE[i % PROSE.length]} (ref ${uuid(i)})` });
        push({
          role: 'assistant',
          content:
            i % 4 === 0 ? `Here is the code:\n\n${CODE}` : `${PROSE[(i + 1) % PROSE.length]}`,
          tokens: { prompt: 200 + i, completion: 50 + (i % 90) },
        });
      }
      return { workflow: 'chat', input_data: { messages: items, temperature: 0.2 } };
    }
    case 'steps_document': {
      while (size < targetBytes) {
        i += 1;
        push({
          id: uuid(i),
          prompt: PROSE[i % PROSE.length],
          notes: [PROSE[(i + 3) % PROSE.length], `build ${i}.${i % 7}.${i % 3}`],
          ...(i % 5 === 0 ? { source: CODE } : {}),
          metrics: { tokens: 1000 + i, latency_ms: 12.5 * (i % 40), ok: i % 11 !== 0 },
        });
      }
      return { workflow: 'code_review', input_data: { steps: items } };
    }
    default: {
      const exhaustive: never = kind;
      throw new Error(`unknown kind ${String(exhaustive)}`);
    }
  }
}

interface Sample {
  kind: Kind;
  value: unknown;
  raw: Buffer;
}

/** As the middleware receives it: the parsed value and the raw bytes. */
function sample(kind: Kind, targetBytes: number, seed: number): Sample {
  const raw = Buffer.from(JSON.stringify(makeBody(kind, targetBytes, seed)));
  return { kind, value: JSON.parse(raw.toString('utf8')) as unknown, raw };
}

/** The work the sanitization middleware adds to a request. */
function addedWork(s: Sample): void {
  const result = sanitize(s.value, { raw: s.raw });
  if (result.classification !== 'clean') {
    throw new Error(`${s.kind}: unexpected ${result.classification}`);
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// Garbage-collection pauses during the latency phase (the usual source of a p99 tail).
// Entries arrive asynchronously, so they are kept and filtered by start time afterwards.
const gcEntries: { startTime: number; duration: number }[] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcEntries.push({ startTime: entry.startTime, duration: entry.duration });
  }
});
gcObserver.observe({ entryTypes: ['gc'] });

// Warm-up: every kind and size, until the regex and function JIT have settled.
const mixSizes = [4 * 1024, 16 * 1024, 64 * 1024, 256 * 1024];
const mix: Sample[] = [];
for (const kind of KINDS) for (const size of mixSizes) mix.push(sample(kind, size, size + 7));
const warmUntil = performance.now() + 1500;
for (let k = 0; performance.now() < warmUntil; k += 1) addedWork(mix[k % mix.length] as Sample);

// Throughput over the mix.
let bytes = 0;
let rounds = 0;
const started = performance.now();
const cpuStarted = cpuMs();
while (performance.now() - started < THROUGHPUT_MS) {
  const s = mix[rounds % mix.length] as Sample;
  addedWork(s);
  bytes += s.raw.length;
  rounds += 1;
}
const wallS = (performance.now() - started) / 1000;
const cpuS = (cpuMs() - cpuStarted) / 1000;
const MiB = 1024 * 1024;
const mbps = bytes / MiB / wallS;
const cpuMbps = bytes / MiB / cpuS;

// Latency for 64 KiB bodies: 8 different bodies per kind, interleaved.
const bodies: Sample[] = [];
for (let seed = 0; seed < 8; seed += 1) {
  for (const kind of KINDS) bodies.push(sample(kind, 64 * 1024, seed * 1000));
}
for (const b of bodies) addedWork(b);
const wall: Record<Kind | 'all', number[]> = {
  run_request: [],
  editor_yaml: [],
  chat_messages: [],
  steps_document: [],
  all: [],
};
const cpu: number[] = [];
const latencyStart = performance.now();
for (let k = 0; k < LATENCY_SAMPLES; k += 1) {
  const b = bodies[k % bodies.length] as Sample;
  const c0 = cpuMs();
  const t0 = performance.now();
  addedWork(b);
  const dt = performance.now() - t0;
  cpu.push(cpuMs() - c0);
  wall[b.kind].push(dt);
  wall.all.push(dt);
}
const latencyEnd = performance.now();
// Let the observer deliver the last entries.
await new Promise((resolve) => setTimeout(resolve, 50));
gcObserver.disconnect();
const gcInWindow = gcEntries.filter(
  (e) => e.startTime >= latencyStart && e.startTime <= latencyEnd,
);
const gcCount = gcInWindow.length;
const gcMs = gcInWindow.reduce((sum, e) => sum + e.duration, 0);
const gcMaxMs = gcInWindow.reduce((max, e) => Math.max(max, e.duration), 0);

const fmt = (n: number, digits = 3): string => n.toFixed(digits);
const rows: string[][] = [['measure', 'p50', 'p95', 'p99', 'max', 'target', 'ok']];
for (const key of [...KINDS, 'all'] as const) {
  const xs = [...wall[key]].sort((a, b) => a - b);
  const p99 = percentile(xs, 99);
  rows.push([
    `64 KiB ${key} (wall ms)`,
    fmt(percentile(xs, 50)),
    fmt(percentile(xs, 95)),
    fmt(p99),
    fmt(xs[xs.length - 1] ?? NaN),
    key === 'all' ? `p99 <= ${TARGET_P99_MS}` : '',
    key === 'all' ? (p99 <= TARGET_P99_MS ? 'yes' : 'NO') : '',
  ]);
}
const cpuSorted = [...cpu].sort((a, b) => a - b);
rows.push([
  '64 KiB all (CPU ms)',
  fmt(percentile(cpuSorted, 50)),
  fmt(percentile(cpuSorted, 95)),
  fmt(percentile(cpuSorted, 99)),
  fmt(cpuSorted[cpuSorted.length - 1] ?? NaN),
  '',
  '',
]);
rows.push(['throughput (MiB/s, wall)', fmt(mbps, 1), '', '', '', `>= ${TARGET_MBPS}`]);
rows[rows.length - 1]?.push(mbps >= TARGET_MBPS ? 'yes' : 'NO');
rows.push(['throughput (MiB/s, CPU)', fmt(cpuMbps, 1), '', '', '', '', '']);

const widths = rows[0]?.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length))) ?? [];
const line = (r: string[]): string =>
  r
    .map((cell, col) =>
      col === 0 ? cell.padEnd(widths[col] ?? 0) : cell.padStart(widths[col] ?? 0),
    )
    .join('  ');
console.log(
  `sanitizer benchmark: sanitize(parsed body) + sha256(raw bytes), node ${process.version}`,
);
console.log(
  `throughput mix: ${KINDS.length} kinds x ${mixSizes.map((s) => `${s / 1024} KiB`).join('/')}, ` +
    `${rounds} bodies, ${fmt(bytes / MiB, 1)} MiB in ${fmt(wallS, 2)} s; latency: ${LATENCY_SAMPLES} samples over ${bodies.length} bodies of ~64 KiB`,
);
console.log(line(rows[0] ?? []));
for (const r of rows.slice(1)) console.log(line(r));
console.log(
  `GC during latency phase: ${gcCount} pauses, ${fmt(gcMs, 1)} ms total, longest ${fmt(gcMaxMs, 2)} ms; ` +
    `load average (1 min): ${fmt(loadavg()[0] ?? NaN, 2)} on ${(await import('node:os')).cpus().length} cores`,
);
