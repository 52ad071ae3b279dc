import type { Agent } from '../types.js';

/** `tier0_echo`: outputs its inputs. */
export const echoAgent: Agent = (request) =>
  Promise.resolve({ output: { ...request.input }, modelUsed: null, tokensUsed: null });
