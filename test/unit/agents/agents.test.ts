import { expect } from 'chai';
import { createAgentSet } from '../../../src/agents/agent-set.js';
import { parseSource } from '../../../src/agents/tier0/parser.js';
import { TIER0_AGENT_IMPLEMENTATIONS } from '../../../src/agents/tier0/index.js';
import type { AgentRequest } from '../../../src/agents/types.js';
import { createNoLlmClient } from '../../../src/llm/no-llm.js';
import {
  LLM_NOT_CONFIGURED_MESSAGE,
  createUnconfiguredLlmClient,
} from '../../../src/llm/unconfigured.js';
import { compileWorkflow } from '../../../src/workflow/compile.js';

const workflow = compileWorkflow({
  name: 'w',
  outputs: { summary: { from: '${steps.review.outputs.summary}' } },
  steps: [
    {
      name: 'review',
      agent: 'tier2_reviewer',
      description: 'Review it.',
      inputs: { code: 'x = 1' },
      outputs: { score: 'score' },
    },
  ],
});
const step = workflow.steps[0]!;
const request = (
  input: Record<string, unknown>,
  signal = new AbortController().signal,
): AgentRequest => ({ step, input, signal, runId: 'r' });

describe('tier-0 agents', () => {
  const agents = TIER0_AGENT_IMPLEMENTATIONS;
  it('echo outputs its inputs; process trims; counter counts characters', async () => {
    expect((await agents.tier0_echo(request({ a: 1 }))).output).to.deep.equal({ a: 1 });
    expect((await agents.tier0_process(request({ text: '  hi \n' }))).output).to.deep.equal({
      result: 'hi',
    });
    expect((await agents.tier0_counter(request({ text: 'héllo' }))).output).to.deep.equal({
      count: 5,
    });
  });

  it('fail rejects with inputs.message', async () => {
    const error = await agents.tier0_fail(request({ message: 'nope' })).catch((e: unknown) => e);
    expect((error as Error).message).to.equal('nope');
  });

  it('sleep waits and is abortable', async () => {
    expect((await agents.tier0_sleep(request({ ms: 1, k: 2 }))).output).to.deep.equal({
      ms: 1,
      k: 2,
    });
    const controller = new AbortController();
    const pending = agents.tier0_sleep(request({ ms: 60_000 }, controller.signal));
    controller.abort(new Error('stop'));
    expect(((await pending.catch((e: unknown) => e)) as Error).message).to.equal('stop');
  });

  it('parser finds Python functions, classes, imports and line metrics', () => {
    const parsed = parseSource(
      'import os\nfrom a.b import c\n\n# note\nclass A:\n    def f(self):\n        pass\n\nasync def g():\n    return 1\n',
    );
    expect(parsed.language).to.equal('python');
    expect(parsed.functions).to.deep.equal([
      { name: 'f', line: 6 },
      { name: 'g', line: 9 },
    ]);
    expect(parsed.classes).to.deep.equal([{ name: 'A', line: 5 }]);
    expect(parsed.imports).to.deep.equal(['os', 'a.b']);
    expect(parsed.metrics).to.deep.equal({
      total_lines: 11,
      code_lines: 7,
      blank_lines: 3,
      comment_lines: 1,
    });
  });

  it('parser finds JS/TS functions, arrow functions, classes and imports', () => {
    const parsed = parseSource(
      "import x from 'x';\nconst y = require('y');\n/* c\n */\nexport async function a() {}\nconst b = (q) => q;\nexport class C {}\n",
      'ts',
    );
    expect(parsed.functions.map((f) => f.name)).to.deep.equal(['a', 'b']);
    expect(parsed.classes.map((c) => c.name)).to.deep.equal(['C']);
    expect(parsed.imports).to.deep.equal(['x', 'y']);
    expect(parsed.metrics.comment_lines).to.equal(2);
  });
});

describe('LLM agents', () => {
  it('in no-LLM mode fill raw_response and every expected output key deterministically', async () => {
    const agents = createAgentSet(workflow, {
      llm: createNoLlmClient(),
      profile: () => ({ persona: 'You review.' }),
    });
    const first = await agents('tier2_reviewer')!(request({ code: 'x = 1' }));
    const second = await agents('tier2_reviewer')!(request({ code: 'x = 1' }));
    expect(first).to.deep.equal(second);
    expect(first.modelUsed).to.equal('placeholder');
    expect(first.tokensUsed?.total).to.be.a('number').above(0);
    expect(Object.keys(first.output).sort()).to.deep.equal(['raw_response', 'score', 'summary']);
    expect(first.output.summary).to.equal('[placeholder summary]');
  });

  it('without a provider fail with a message naming what to configure', async () => {
    const agents = createAgentSet(workflow, {
      llm: createUnconfiguredLlmClient(),
      profile: () => undefined,
    });
    const error = await agents('tier2_reviewer')!(request({})).catch((e: unknown) => e);
    expect((error as Error).message).to.equal(LLM_NOT_CONFIGURED_MESSAGE);
  });

  it('pass tier, pinned model, persona and signal to the client, and merge a JSON answer', async () => {
    const seen: unknown[] = [];
    const agents = createAgentSet(workflow, {
      llm: {
        complete: (r) => {
          seen.push([r.tier, r.model, r.system, r.signal.aborted]);
          return Promise.resolve({
            text: '{"score": 7}',
            model: 'm1',
            tokensUsed: { input: 9, output: 0, total: 9 },
          });
        },
      },
      profile: () => ({ persona: 'P' }),
    });
    const result = await agents('tier3_reviewer')!(request({ code: 'x' }));
    expect(seen).to.deep.equal([[2, undefined, 'P', false]]);
    expect(result.output).to.deep.equal({ score: 7, raw_response: '{"score": 7}' });
  });

  it('resolve extra agents first, then tier-0, then LLM names; unknown tier-0 names are undefined', () => {
    const extra = () => Promise.resolve({ output: {}, modelUsed: null, tokensUsed: null });
    const agents = createAgentSet(workflow, {
      llm: createNoLlmClient(),
      profile: () => undefined,
      extra: { tier0_echo: extra },
    });
    expect(agents('tier0_echo')).to.equal(extra);
    expect(agents('tier0_process')).to.equal(TIER0_AGENT_IMPLEMENTATIONS.tier0_process);
    expect(agents('tier0_nope')).to.equal(undefined);
  });
});
