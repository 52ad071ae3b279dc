/**
 * Loads a module of the package as the benchmarks measure it: the compiled dist/ that `npm start`
 * ships (the bench scripts build it first), not the tsx loader's transform of src/, whose
 * keepNames wraps every named closure in a `__name()` call (about 16 per run in bench:llm's
 * burst, 4 KiB a run that its scavenges copied). `--src` on the command line or BENCH_SRC=1
 * (which reaches the benches' child processes) measures src/ through tsx instead.
 */
export const FROM_SRC = process.argv.includes('--src') || process.env.BENCH_SRC === '1';

/** `path` is relative to the package root, without extension (`src/http/server`). */
export function loadShipped<T>(path: string): Promise<T> {
  const url = new URL(
    `../../${FROM_SRC ? '' : 'dist/'}${path}${FROM_SRC ? '.ts' : '.js'}`,
    import.meta.url,
  );
  return import(url.href) as Promise<T>;
}
