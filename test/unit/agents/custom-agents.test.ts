import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAgentsModule } from '../../../src/agents/agents-module.js';
import type { Agent } from '../../../src/agents/types.js';
import { createRuntime } from '../../../src/engine/runtime.js';
import { AppError, ConfigError, ValidationError } from '../../../src/errors.js';

const summarize: Agent = ({ input }) =>
  Promise.resolve({
    output: { summary: `${String(input.text).slice(0, 5)}…` },
    modelUsed: null,
    tokensUsed: null,
  });

const WORKFLOW = {
  name: 'custom',
  outputs: { summary: { from: '${steps.sum.outputs.summary}' } },
  steps: [{ name: 'sum', agent: 'summarize', inputs: { text: 'a long text' } }],
};

describe('custom agents (embedding API)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'custom-agents-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs an agent registered under a name outside tier{N}_{role}', async () => {
    const runtime = createRuntime({ persist: false, agents: { summarize } });
    const record = await runtime.run({ workflow: WORKFLOW });
    expect(record.status).to.equal('success');
    expect(record.final_output).to.deep.equal({ summary: 'a lon…' });
    await runtime.shutdown();
  });

  it('validation accepts registered names and still rejects unknown ones', async () => {
    const runtime = createRuntime({ persist: false, agents: { summarize } });
    expect((await runtime.validate(WORKFLOW)).valid).to.equal(true);
    const unknown = { ...WORKFLOW, steps: [{ name: 'sum', agent: 'summarise' }] };
    const result = await runtime.validate(unknown);
    expect(result.valid).to.equal(false);
    expect(result.errors[0]?.loc).to.deep.equal(['steps', 0, 'agent']);
    const plain = createRuntime({ persist: false });
    let error: unknown;
    try {
      await plain.run({ workflow: WORKFLOW });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(ValidationError);
    await runtime.shutdown();
    await plain.shutdown();
  });

  it('refuses bad registrations with a config error naming each', () => {
    const bad = { '9lives': summarize, fine: 'not a function' } as unknown as Record<string, Agent>;
    expect(() => createRuntime({ persist: false, agents: bad }))
      .to.throw(AppError)
      .with.property('message')
      .that.matches(
        /agent name '9lives' must start with a letter.*agent 'fine' must be a function/,
      );
  });

  it('loadAgentsModule reads the agents or default export and names what is wrong', async () => {
    const good = join(dir, 'good.mjs');
    await writeFile(
      good,
      'export const agents = { hello: async () => ({ output: {}, modelUsed: null, tokensUsed: null }) };\n',
    );
    expect(Object.keys(await loadAgentsModule(good))).to.deep.equal(['hello']);
    const empty = join(dir, 'empty.mjs');
    await writeFile(empty, 'export const other = 1;\n');
    const missing = join(dir, 'missing.mjs');
    const cases: [string, string][] = [
      [empty, 'export a record of agents as `agents` or as the default export'],
      [missing, 'module not found'],
    ];
    for (const [path, problem] of cases) {
      let error: unknown;
      try {
        await loadAgentsModule(path);
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(ConfigError);
      expect((error as ConfigError).problems).to.deep.equal([
        `AGENTIC_AGENTS_MODULE=${JSON.stringify(path)}: ${problem}`,
      ]);
    }
  });
});
