/**
 * `npm run chaos`: the full chaos campaign of issue 26 (see campaign.ts) on dist/. CHAOS_RUNS
 * (100), CHAOS_KILLS (20) and CHAOS_SEED (time) change it. Prints the figures; exits 1 when the
 * promise broke.
 */
import { runCampaign } from './campaign.js';

const runs = Number(process.env.CHAOS_RUNS ?? 100);
const kills = Number(process.env.CHAOS_KILLS ?? 20);
const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
console.log(`chaos: ${runs} runs of 6 steps, ${kills} SIGKILLs, seed ${seed}`);
const result = await runCampaign({
  runs,
  kills,
  seed,
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
