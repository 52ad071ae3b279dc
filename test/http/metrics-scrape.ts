/** Reads samples out of a Prometheus text exposition (tests of `/metrics`). */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample line of `text` (comments skipped). */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/**
 * The value of the one sample of `name` whose labels are exactly `labels`; 0 when there is
 * none (a counter never incremented has no sample), an error when several match.
 */
export function sampleValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number {
  const want = JSON.stringify(Object.entries(labels).sort());
  const found = parseSamples(text).filter(
    (s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want,
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${want}`);
  return found[0]?.value ?? 0;
}
