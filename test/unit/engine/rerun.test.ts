/**
 * `runtime.rerun` (a fork from a step, docs/rerun.md) through a real runtime on both engines:
 * the steps upstream of the chosen step are reused from the source run's file (no model call),
 * the step and its downstream steps run, and the fork's file says what it spent.
 */
import { expect } from 'chai';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Agent } from '../../../src/agents/types.js';
import { createRuntime } from '../../../src/engine/runtime.js';
import { replayFromRecord } from '../../../src/events/replay-from-record.js';
import type { RunRecord, Runtime, WorkflowEvent } from '../../../src/engine/types.js';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import { createLlmRouter } from '../../../src/llm/router.js';
import {
  removeDir,
  runFiles,
  sequence,
  tempDir,
  validateRecord,
} from '../../conformance/helpers.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';

/** Five LLM steps in a chain; each says which step it is in its description. */
const FIVE_STEPS = [
  'name: five_llm',
  'inputs:',
  '  topic: { type: string, required: true }',
  'outputs:',
  "  final: { from: '${steps.s5.outputs.note}' }",
  'steps:',
  '  - name: s1',
  '    agent: tier2_writer',
  '    description: Step s1.',
  "    inputs: { topic: '${inputs.topic}' }",
  ...['s2', 's3', 's4', 's5'].flatMap((name, i) => [
    `  - name: ${name}`,
    '    agent: tier2_writer',
    `    description: Step ${name}.`,
    `    depends_on: [s${i + 1}]`,
    `    inputs: { previous: '\${steps.s${i + 1}.outputs.note}', topic: '\${inputs.topic}' }`,
  ]),
].join('\n');

const USAGE = { prompt: 10, completion: 5 };

/** The step a chat request is for (its prompt holds the step's description). */
function stepOf(body: unknown): string {
  const text = JSON.stringify(body);
  return /Step (s\d)\./.exec(text)?.[1] ?? 'unknown';
}

function totalTokens(record: RunRecord): number {
  let total = 0;
  for (const step of record.steps) {
    const used = step.tokens_used as { total: number } | null;
    total += used?.total ?? 0;
  }
  return total;
}

async function collect(events: AsyncIterable<WorkflowEvent>): Promise<WorkflowEvent[]> {
  const seen: WorkflowEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

for (const adapter of ['native', 'graph'] as const) {
  describe(`runtime.rerun (${adapter} engine)`, () => {
    let dir: string;
    let runsDir: string;
    let workflowsDir: string;
    let runtime: Runtime | undefined;
    let server: FakeServer | undefined;
    let http: HttpClient | undefined;

    beforeEach(async () => {
      dir = await tempDir('agentic-rerun-');
      runsDir = join(dir, 'runs');
      workflowsDir = join(dir, 'wf');
      await mkdir(workflowsDir);
    });
    afterEach(async () => {
      await runtime?.shutdown({ graceMs: 1000 });
      runtime = undefined;
      await http?.close();
      http = undefined;
      await server?.close();
      server = undefined;
      await removeDir(dir);
    });

    function llmRuntime(fake: FakeServer): Runtime {
      const client = (http = createHttpClient({ provider: 'fake' }));
      const llm = createLlmRouter({
        providers: {
          get: (name) =>
            name === 'fake'
              ? createOpenAiCompatibleProvider({
                  name: 'fake',
                  http: client,
                  chatUrl: () => `${fake.url}/v1/chat/completions`,
                  modelsUrl: `${fake.url}/v1/models`,
                  headers: {},
                })
              : undefined,
          missing: () => 'not configured',
        },
        chains: { '2': ['fake:small'] },
      });
      return (runtime = createRuntime({
        runsDir,
        workflowsDir,
        llm,
        defaultAdapter: adapter,
      }));
    }

    it('reruns the failed last step of a 5-step LLM run: one model call, only its tokens new', async () => {
      await writeFile(join(workflowsDir, 'five_llm.yaml'), FIVE_STEPS);
      let s5Answers = false;
      const fake = (server = await startFakeServer((request, res) => {
        const step = stepOf(request.body);
        if (step === 's5' && !s5Answers) {
          sendJson(res, 400, { error: { message: 'bad request for s5', type: 'invalid' } });
          return;
        }
        const answer = JSON.stringify({ note: `${step} done` });
        sendJson(res, 200, openAiAnswer(answer, { model: 'small', usage: USAGE }));
      }));
      const rt = llmRuntime(fake);
      const source = await rt.run({ workflow: 'five_llm', input: { topic: 'ducks' } });
      expect(source.status).to.equal('failed');
      expect(source.steps.map((s) => s.status)).to.deep.equal([
        'success',
        'success',
        'success',
        'success',
        'failed',
      ]);
      expect(fake.requests.map((r) => stepOf(r.body))).to.deep.equal([
        's1',
        's2',
        's3',
        's4',
        's5',
      ]);
      expect(totalTokens(source)).to.equal(60);

      s5Answers = true;
      fake.requests.length = 0;
      const handle = await rt.rerun(source.run_id, { fromStep: 's5' });
      expect(handle.runId).to.not.equal(source.run_id);
      const events = await collect(handle.events);
      const fork = await handle.done;

      expect(fake.requests.map((r) => stepOf(r.body))).to.deep.equal(['s5']);
      expect(fork.status).to.equal('success');
      expect(fork.final_output).to.deep.equal({ final: 's5 done' });
      expect(fork.extra.forked_from).to.deep.equal({ run_id: source.run_id, step: 's5' });
      expect(fork.adapter).to.equal(adapter);
      // Reused steps: the source's outputs, no tokens of this run, the source's under metadata.
      for (const [i, step] of fork.steps.slice(0, 4).entries()) {
        expect(step.status).to.equal('success');
        expect(step.output).to.deep.equal(source.steps[i]!.output);
        expect(step.tokens_used).to.equal(null);
        expect(step.model_used).to.equal('fake:small');
        expect(step.metadata.reused_from).to.deep.equal({
          run_id: source.run_id,
          tokens_used: { input: 10, output: 5, total: 15 },
          // The router of this test has no price table.
          cost_usd: null,
        });
      }
      const rerun = fork.steps[4]!;
      expect(rerun.tokens_used).to.deep.equal({ input: 10, output: 5, total: 15 });
      expect(rerun.metadata.reused_from).to.equal(undefined);
      expect(rerun.input).to.deep.equal({ previous: 's4 done', topic: 'ducks' });
      expect(totalTokens(fork)).to.equal(15);
      // Reused steps go out as their step_start and step_end together, before anything runs.
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:s1',
        'step_end:s1=success',
        'step_start:s2',
        'step_end:s2=success',
        'step_start:s3',
        'step_end:s3=success',
        'step_start:s4',
        'step_end:s4=success',
        'step_start:s5',
        ...events
          .filter((e) => e.type === 'token_delta')
          .map((e) => `token_delta:${(e as { step: string }).step}`),
        'step_end:s5=success',
        'workflow_end=success',
      ]);

      const files = await runFiles(runsDir);
      const forkFile = files.find((f) => f.record.run_id === fork.run_id)!.record;
      expect(validateRecord(forkFile), JSON.stringify(validateRecord.errors)).to.equal(true);
      expect(forkFile.steps).to.deep.equal(fork.steps);
      expect(totalTokens(forkFile)).to.equal(15);
    });

    it('reuses the other branches and the dependencies, reruns the step and its dependents, and a failure elsewhere', async () => {
      // a → b → c, a → x (another branch), y fails; rerun from b: a and x reused, b and c run,
      // y (failed in the source) runs again.
      const called: string[] = [];
      let yFails = true;
      const echo: Agent = ({ input, step }) => {
        called.push(step.name);
        if (step.name === 'y' && yFails) return Promise.reject(new Error('y broke'));
        return Promise.resolve({
          output: { ...input, by: step.name },
          modelUsed: null,
          tokensUsed: null,
        });
      };
      await writeFile(
        join(workflowsDir, 'branches.yaml'),
        [
          'name: branches',
          'inputs:',
          '  n: { type: integer, default: 1 }',
          '  label: { type: string, default: first }',
          'steps:',
          "  - { name: a, agent: echo, inputs: { n: '${inputs.n}' } }",
          "  - { name: b, agent: echo, depends_on: [a], inputs: { label: '${inputs.label}', n: '${steps.a.outputs.n}' } }",
          "  - { name: c, agent: echo, depends_on: [b], inputs: { label: '${steps.b.outputs.label}' } }",
          "  - { name: x, agent: echo, depends_on: [a], inputs: { n: '${steps.a.outputs.n}' } }",
          '  - { name: y, agent: echo }',
        ].join('\n'),
      );
      const rt = (runtime = createRuntime({
        runsDir,
        workflowsDir,
        noLlm: true,
        defaultAdapter: adapter,
        agents: { echo },
      }));
      const source = await rt.run({ workflow: 'branches', input: { n: 2 } });
      expect(source.status).to.equal('failed');
      yFails = false;
      called.length = 0;
      const handle = await rt.rerun(source.run_id, { fromStep: 'b', inputs: { label: 'second' } });
      const live = await collect(handle.events);
      const fork = await handle.done;
      // A late subscriber's replay from the file is the live sequence.
      expect(sequence(replayFromRecord(fork), true)).to.deep.equal(sequence(live, true));
      expect(sequence(live, true).slice(0, 5)).to.deep.equal([
        'workflow_start',
        'step_start:a',
        'step_end:a=success',
        'step_start:x',
        'step_end:x=success',
      ]);
      expect([...called].sort()).to.deep.equal(['b', 'c', 'y']);
      expect(fork.status).to.equal('success');
      expect(fork.inputs).to.deep.equal({ n: 2, label: 'second' });
      expect(
        fork.steps.map((s) => [s.step_name, s.metadata.reused_from?.run_id ?? null]),
      ).to.deep.equal([
        ['a', source.run_id],
        ['b', null],
        ['c', null],
        ['x', source.run_id],
        ['y', null],
      ]);
      expect(fork.steps[2]!.output).to.deep.equal({ label: 'second', by: 'c' });
    });

    it('refuses what it cannot fork: unknown run 404, unknown step 422, a running source 409, a gone or changed workflow 409, bad inputs 422', async () => {
      let release: (() => void) | undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const agents: Record<string, Agent> = {
        echo: ({ input }) =>
          Promise.resolve({ output: { ...input }, modelUsed: null, tokensUsed: null }),
        wait: async () => {
          await gate;
          return { output: {}, modelUsed: null, tokensUsed: null };
        },
      };
      const yaml = (steps: string[]): string =>
        ['name: small', 'inputs:', '  n: { type: integer, default: 1 }', 'steps:', ...steps].join(
          '\n',
        );
      await writeFile(
        join(workflowsDir, 'small.yaml'),
        yaml(['  - { name: a, agent: echo }', '  - { name: b, agent: echo, depends_on: [a] }']),
      );
      await writeFile(
        join(workflowsDir, 'slow.yaml'),
        'name: slow\nsteps:\n  - { name: w, agent: wait }\n',
      );
      const rt = (runtime = createRuntime({
        runsDir,
        workflowsDir,
        noLlm: true,
        defaultAdapter: adapter,
        agents,
      }));
      const source = await rt.run({ workflow: 'small' });
      const refusal = async (promise: Promise<unknown>) => {
        try {
          await promise;
        } catch (error) {
          const e = error as { status: number; code: string; message: string; details?: unknown };
          return { status: e.status, code: e.code, message: e.message, details: e.details };
        }
        throw new Error('expected a refusal');
      };
      expect(await refusal(rt.rerun('no-such-run', { fromStep: 'a' }))).to.deep.include({
        status: 404,
        code: 'run_not_found',
      });
      expect(await refusal(rt.rerun(source.run_id, { fromStep: 'zz' }))).to.deep.equal({
        status: 422,
        code: 'validation_error',
        message: `run ${source.run_id} has no step "zz"`,
        details: [
          {
            loc: ['fromStep'],
            msg: `run ${source.run_id} has no step "zz"`,
            type: 'value_error.unknown_step',
          },
        ],
      });
      expect(
        await refusal(rt.rerun(source.run_id, { fromStep: 'b', inputs: { n: 'many' } })),
      ).to.deep.include({ status: 422, code: 'input_invalid' });

      const slow = await rt.start({ workflow: 'slow' });
      expect(await refusal(rt.rerun(slow.runId, { fromStep: 'w' }))).to.deep.equal({
        status: 409,
        code: 'conflict',
        message: `run ${slow.runId} is still running; rerun it once it has ended`,
        details: undefined,
      });
      release!();
      await slow.done;

      await writeFile(join(workflowsDir, 'small.yaml'), yaml(['  - { name: a, agent: echo }']));
      expect(await refusal(rt.rerun(source.run_id, { fromStep: 'b' }))).to.deep.include({
        status: 409,
        code: 'conflict',
        message: `step "b" is no longer in workflow small (it changed since run ${source.run_id})`,
      });
      await rm(join(workflowsDir, 'small.yaml'));
      expect(await refusal(rt.rerun(source.run_id, { fromStep: 'a' }))).to.deep.include({
        status: 409,
        code: 'conflict',
        message: `the workflow small of run ${source.run_id} is no longer in the workflows directory; a rerun needs it`,
      });
    });
  });
}
