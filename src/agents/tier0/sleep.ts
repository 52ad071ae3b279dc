import type { Agent } from '../types.js';

/** `tier0_sleep`: waits `inputs.ms` milliseconds (abortable through the signal), outputs its inputs. */
export const sleepAgent: Agent = (request) => {
  const raw = request.input.ms;
  const ms = typeof raw === 'number' && Number.isFinite(raw) && raw > 0 ? raw : 0;
  const { signal } = request;
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(reasonOf(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(reasonOf(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve({ output: { ...request.input }, modelUsed: null, tokensUsed: null });
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
};

function reasonOf(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}
