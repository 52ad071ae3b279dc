/**
 * A circuit per provider, beside the router's circuit per model: it counts only calls that
 * could not connect (refused, no such host, connect timeout), since those say the provider is
 * away, not that one model fails; once open it skips every model of the provider, in every
 * tier. A probe that could not connect opens it at once; any answer (a probe's, or a call's,
 * HTTP errors included) closes it. Its half-open trial after the cool-down is how a provider
 * that is back gets used again without a re-probe. Per process: not shared through Redis.
 */
import { CircuitBreaker, type BreakerState } from './circuit-breaker.js';
import type { ProviderAnswer } from './probe.js';

export interface ProviderCircuitsOptions {
  /** Consecutive failed connections that open a provider's circuit. */
  threshold: number;
  /** Milliseconds an open circuit waits before one half-open trial call. */
  cooldownMs: number;
  now: () => number;
}

interface Circuit {
  breaker: CircuitBreaker;
  /** The last connection failure, for the skip message. */
  reason: string;
}

export interface ProviderCircuits {
  /** Whether a call to `provider` may go out; else why not (`ollama unreachable (...)`). */
  acquire(provider: string): { ok: true } | { ok: false; reason: string };
  /** The provider answered (with anything, an HTTP error included). */
  reached(provider: string): void;
  /** A call could not connect; `reason` is its error without the provider's prefix. */
  unreachable(provider: string, reason: string): void;
  /** A call acquired but not made, or cancelled: no verdict. */
  released(provider: string): void;
  /** Takes a probe's answers: unreachable providers open, answering ones close. */
  learn(answers: readonly ProviderAnswer[]): void;
  state(provider: string): BreakerState;
}

export function createProviderCircuits(options: ProviderCircuitsOptions): ProviderCircuits {
  const circuits = new Map<string, Circuit>();
  const circuitOf = (provider: string): Circuit => {
    let circuit = circuits.get(provider);
    if (circuit === undefined) {
      circuit = {
        breaker: new CircuitBreaker({
          threshold: options.threshold,
          cooldownMs: options.cooldownMs,
          now: options.now,
        }),
        reason: 'no connection',
      };
      circuits.set(provider, circuit);
    }
    return circuit;
  };

  return {
    acquire(provider) {
      const { breaker, reason } = circuitOf(provider);
      if (breaker.tryAcquire()) return { ok: true };
      const wait = Math.ceil(breaker.retryInMs() / 1000);
      const when = wait > 0 ? `retry in ${wait} s` : 'a trial call is under way';
      return { ok: false, reason: `${provider} unreachable (${reason}; ${when})` };
    },
    reached: (provider) => circuitOf(provider).breaker.succeeded(),
    unreachable(provider, reason) {
      const circuit = circuitOf(provider);
      circuit.reason = reason;
      circuit.breaker.failed();
    },
    released: (provider) => circuitOf(provider).breaker.released(),
    learn(answers) {
      for (const answer of answers) {
        const circuit = circuitOf(answer.name);
        if ('models' in answer || !answer.unreachable) {
          circuit.breaker.adopt({ state: 'closed' });
          continue;
        }
        circuit.reason = withoutPrefix(answer.name, answer.error);
        circuit.breaker.adopt({ state: 'open', openedAt: options.now() });
      }
    },
    state: (provider) => circuitOf(provider).breaker.current(),
  };
}

/** An LlmError's message without its `provider: ` prefix. */
export function withoutPrefix(provider: string, message: string): string {
  return message.startsWith(`${provider}: `) ? message.slice(provider.length + 2) : message;
}
