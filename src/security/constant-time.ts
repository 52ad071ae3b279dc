import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares a presented credential with the configured one in constant time.
 *
 * Both sides are encoded as UTF-8 bytes and hashed to fixed-length digests first, so neither
 * the length nor the content of the secret leaks through timing, and a header holding
 * non-ASCII bytes is just a mismatch (never an exception, never a 500).
 */
export function constantTimeEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b) && presented.length === expected.length;
}
