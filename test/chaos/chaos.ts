/**
 * `npm run chaos`: the full chaos campaign of issue 26 (see campaign.ts) on dist/. CHAOS_MODE
 * (`single`: one service process killed; `workers`: an api instance and two workers on a real
 * redis-server, workers killed; `both`, the default), CHAOS_RUNS (100), CHAOS_KILLS (20) and
 * CHAOS_SEED (time) change it. Prints the figures; exits 1 when the promise broke.
 */
import { runCampaign } from './campaign.js';

const runs = Number(process.env.CHAOS_RUNS ?? 100);
const kills = Number(process.env.CHAOS_KILLS ?? 20);
const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
const chosen = process.env.CHAOS_MODE ?? 'both';
if (!['single', 'workers', 'both'].includes(chosen)) {
  console.error(`CHAOS_MODE must be single, workers or both (got ${chosen})`);
  process.exit(2);
}
const modes =
  chosen === 'both' ? (['single', 'workers'] as const) : ([chosen] as ['single' | 'workers']);
for (const mode of modes) {
  const what =
    mode === 'single' ? 'one service process' : 'an api instance + 2 workers on Redis, workers';
  console.log(
    `chaos (${mode}): ${runs} runs of 6 steps, ${kills} SIGKILLs of ${what}, seed ${seed}`,
  );
  const result = await runCampaign({
    runs,
    kills,
    seed,
    mode,
    staggered: true,
    killAfterMs: [200, 1500],
    windowMs: 250,
    log: (line) => console.log(`  ${line}`),
  });
  const ended = new Map<string, number>();
  for (const status of result.statuses.values()) ended.set(status, (ended.get(status) ?? 0) + 1);
  console.log(
    `runs: ${[...ended].map(([s, n]) => `${n} ${s}`).join(', ')}; step executions ${result.executions} ` +
      `for ${runs * 6} steps, ${result.repeated} steps ran twice or more (each after a kill); ` +
      `${result.seconds.toFixed(1)} s`,
  );
  if (result.violations.length > 0) {
    console.log(`PROMISE BROKEN (${result.violations.length}):`);
    for (const v of result.violations.slice(0, 50)) console.log(`  ${v}`);
    process.exitCode = 1;
  } else console.log('every run success, no finished step ran again');
}
