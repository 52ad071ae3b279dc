import type { Agent } from '../types.js';
import { textInput } from './text-input.js';

/** `tier0_process`: `{result: trimmed text}` of `inputs.text`. */
export const processAgent: Agent = (request) =>
  Promise.resolve({
    output: { result: textInput(request.input).trim() },
    modelUsed: null,
    tokensUsed: null,
  });
