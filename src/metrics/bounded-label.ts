/** The label value every value past a label's limit is counted under. */
export const OTHER_LABEL = '_other';

/**
 * Keeps a label's value set bounded: the first `limit` distinct values are kept as they are,
 * every later one is reported as {@link OTHER_LABEL}. Workflow and agent names are usually a
 * short list from files, but inline workflows can bring any name, and each distinct label
 * value is a time series kept for the life of the process.
 */
export function createBoundedLabel(limit: number): (value: string | undefined) => string {
  const seen = new Set<string>();
  return (value) => {
    const label = value === undefined || value === '' ? 'unknown' : value;
    if (seen.has(label)) return label;
    if (seen.size >= limit) return OTHER_LABEL;
    seen.add(label);
    return label;
  };
}
