/**
 * Loads a module of the package as the benchmarks measure it: the compiled dist/ that `npm start`
 * ships (the bench scripts build it first), not the tsx loader's transform of src/, whose
 * keepNames wraps every named closure in a `__name()` call (about 16 per run in bench:llm's
 * burst, 4 KiB a run that its scavenges copied). `--src` on the command line or BENCH_SRC=1
 * (which reaches the benches' child processes) measures src/ through tsx instead.
 */
export const FROM_SRC = process.argv.includes('--src') || process.env.BENCH_SRC === '1';

/**
 * BENCH_DIST: another compiled tree to measure instead of dist/ (relative to the package root, so
 * it resolves the same node_modules), e.g. a copy of the base build's dist/ kept beside it: base
 * and changed build then run in the same bench, alternately, on the same machine load.
 */
const DIST = `${(process.env.BENCH_DIST ?? 'dist').replace(/\/+$/, '')}/`;

/** `path` is relative to the package root, without extension (`src/http/server`). */
export function loadShipped<T>(path: string): Promise<T> {
  const url = new URL(
    `../../${FROM_SRC ? '' : DIST}${path}${FROM_SRC ? '.ts' : '.js'}`,
    import.meta.url,
  );
  return import(url.href) as Promise<T>;
}
