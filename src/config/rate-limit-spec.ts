/** A parsed `N/second|minute|hour|day` limit. */
export interface RateLimitSpec {
  limit: number;
  windowMs: number;
}

const UNIT_MS = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

export function parseRateLimit(text: string): RateLimitSpec | undefined {
  const match = /^\s*([1-9][0-9]*)\s*\/\s*(second|minute|hour|day)s?\s*$/.exec(text);
  if (!match) return undefined;
  const unit = match[2] as keyof typeof UNIT_MS;
  return { limit: Number(match[1]), windowMs: UNIT_MS[unit] };
}
