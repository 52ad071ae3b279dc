import { expect } from 'chai';
import { trace } from '@opentelemetry/api';
import { traceToolCalls } from '../../../src/tracing/index.js';
import type { ToolKit } from '../../../src/tools/index.js';

describe('traceToolCalls', () => {
  // The approval listener moves the step's region to awaiting_approval: a traced toolkit that
  // dropped it would hide the wait from the machine and the inspector whenever tracing is on.
  it('hands the approval listener and the signal through to the wrapped kit', async () => {
    const seen: unknown[] = [];
    const kit = {
      call: (
        _name: string,
        _args: unknown,
        _caller: unknown,
        signal: AbortSignal,
        onApproval?: (waiting: boolean) => void,
      ) => {
        seen.push(signal);
        onApproval?.(true);
        onApproval?.(false);
        return Promise.resolve('done');
      },
    } as unknown as ToolKit;
    const traced = traceToolCalls(kit, {
      tracer: trace.getTracer('test'),
      sensitive: false,
      parentOf: () => undefined,
    });
    const waits: boolean[] = [];
    const signal = new AbortController().signal;
    const result = await traced.call(
      'file_write',
      {},
      { workflow: 'w', step: 's', runId: 'r', allowed: ['file_write'] },
      signal,
      (waiting) => waits.push(waiting),
    );
    expect(result).to.equal('done');
    expect(seen).to.deep.equal([signal]);
    expect(waits).to.deep.equal([true, false]);
  });
});
