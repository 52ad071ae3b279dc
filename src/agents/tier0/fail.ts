import type { Agent } from '../types.js';

/** `tier0_fail`: fails with `inputs.message` (for tests and failure-path demos). */
export const failAgent: Agent = (request) => {
  const message = request.input.message;
  return Promise.reject(
    new Error(typeof message === 'string' && message !== '' ? message : 'tier0_fail failed'),
  );
};
