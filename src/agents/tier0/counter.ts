import type { Agent } from '../types.js';
import { textInput } from './text-input.js';

/** `tier0_counter`: `{count: characters}` of `inputs.text`. */
export const counterAgent: Agent = (request) =>
  Promise.resolve({
    output: { count: [...textInput(request.input)].length },
    modelUsed: null,
    tokensUsed: null,
  });
