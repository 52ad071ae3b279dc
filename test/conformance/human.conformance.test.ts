/**
 * Human steps (kind `human`, docs/workflow-format.md "Human steps") on both engines, through the
 * real runtime and real files: the question is announced (`approval_required`, kind input),
 * listed with the approvals, answered (checked against its schema; the answer is the step's
 * outputs), timed out (fail, or the default answer), cancelled; the run file and the replay
 * rebuilt from it; a run left waiting at a shutdown asks again, with the same id, when resumed.
 */
import { expect } from 'chai';
import { mkdir, readdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineClock } from '../../machines/engine-contract.js';
import { humanRequestId } from '../../src/engine/kinds/human.js';
import { systemClock } from '../../src/engine/system-clock.js';
import { createRuntime } from '../../src/engine/runtime.js';
import type {
  AdapterName,
  Runtime,
  RuntimeOptions,
  WorkflowEvent,
} from '../../src/engine/types.js';
import { replayFromRecord } from '../../src/events/replay-from-record.js';
import { TestClock } from '../fixtures/test-clock.js';
import {
  CLOCK_START,
  nextEvent,
  removeDir,
  runFiles,
  sequence,
  tempDir,
  validateEvent,
  validateRecord,
} from './helpers.js';

const ADAPTERS: readonly AdapterName[] = ['native', 'graph'];

const SCHEMA = {
  type: 'object',
  required: ['approved'],
  properties: { approved: { type: 'boolean' }, note: { type: 'string' } },
};

const SIGN_OFF = `
name: sign_off
inputs: { version: { type: string, default: '1.2' } }
outputs: { approved: { from: '\${steps.sign_off.outputs.approved}' } }
steps:
  - { name: draft, agent: tier0_echo, inputs: { notes: 'notes for \${inputs.version}' } }
  - name: sign_off
    depends_on: [draft]
    human:
      prompt: 'Approve the release notes for \${inputs.version}? (\${steps.draft.outputs.notes})'
      schema: ${JSON.stringify(SCHEMA)}
  - { name: publish, agent: tier0_echo, depends_on: [sign_off], inputs: { approved: '\${steps.sign_off.outputs.approved}' } }
`;

const TIMED = (policy: 'fail' | 'default'): string => `
name: timed_${policy}
steps:
  - name: ask
    human:
      prompt: Go?
      schema: ${JSON.stringify(SCHEMA)}
      timeout_seconds: 5
      on_timeout: ${policy}
${policy === 'default' ? '      default: { approved: false, note: nobody answered }' : ''}
  - { name: after, agent: tier0_echo, depends_on: [ask] }
`;

const withoutTimestamp = (event: WorkflowEvent): Record<string, unknown> => {
  const { timestamp: _timestamp, ...rest } = event;
  return rest;
};

for (const adapter of ADAPTERS) {
  describe(`human steps: ${adapter} engine`, function () {
    this.timeout(30_000);
    let runsDir: string;
    const runtimes: Runtime[] = [];

    beforeEach(async () => {
      runsDir = await tempDir('agentic-human-');
    });
    afterEach(async () => {
      for (const rt of runtimes.splice(0)) await rt.shutdown({ graceMs: 0 });
      await removeDir(runsDir);
    });

    function make(options: RuntimeOptions = {}): Runtime {
      const rt = createRuntime({ runsDir, noLlm: true, defaultAdapter: adapter, ...options });
      runtimes.push(rt);
      return rt;
    }

    /** Starts `yaml` and waits for its question; collects the run's events meanwhile. */
    async function asked(rt: Runtime, yaml: string, runId?: string) {
      const question = nextEvent(
        (listener) => rt.subscribe(listener),
        (event) => event.type === 'approval_required',
      );
      const handle = await rt.start({ workflow: yaml, ...(runId === undefined ? {} : { runId }) });
      const events: WorkflowEvent[] = [];
      const collected = (async () => {
        for await (const event of handle.events) events.push(event);
      })();
      const required = await question;
      return { handle, events, collected, required };
    }

    it('asks, lists, refuses a wrong answer (nothing changes), takes a valid one as the outputs, then 409', async () => {
      const rt = make();
      const { handle, events, collected, required } = await asked(rt, SIGN_OFF, 'human-1');
      const id = humanRequestId('human-1', 'sign_off');
      expect(withoutTimestamp(required)).to.deep.equal({
        type: 'approval_required',
        run_id: 'human-1',
        seq: required.seq,
        step: 'sign_off',
        tool_name: 'human',
        call_id: id,
        kind: 'input',
        prompt: 'Approve the release notes for 1.2? (notes for 1.2)',
        schema: SCHEMA,
      });
      const listed = rt.approvals.pending();
      expect(listed).to.have.length(1);
      expect(listed[0]).to.deep.include({
        callId: id,
        runId: 'human-1',
        workflow: 'sign_off',
        step: 'sign_off',
        toolName: 'human',
        kind: 'input',
        prompt: 'Approve the release notes for 1.2? (notes for 1.2)',
        schema: SCHEMA,
        expiresAt: undefined,
      });
      expect(rt.approvals.respond(id, { approved: 'yes' })).to.deep.equal({
        invalid: '/approved must be boolean',
      });
      expect(rt.approvals.respond(id, {})).to.deep.equal({
        invalid: "(answer) must have required property 'approved'",
      });
      expect(rt.approvals.answer(id, true)).to.have.property('invalid');
      expect(rt.approvals.respond('no-such-id', { approved: true })).to.equal('unknown');
      expect(rt.approvals.pending()).to.have.length(1);
      expect(rt.approvals.respond(id, { approved: true, note: 'ship it' })).to.equal('decided');
      expect(rt.approvals.respond(id, { approved: true })).to.equal('already_decided');
      expect(rt.approvals.answer(id, true)).to.equal('already_decided');
      expect(rt.approvals.pending()).to.deep.equal([]);
      const record = await handle.done;
      await collected;

      for (const event of events)
        expect(validateEvent(event), JSON.stringify(event)).to.equal(true);
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:draft',
        'step_end:draft=success',
        'step_start:sign_off',
        'approval_required:sign_off',
        'approval_decision:sign_off',
        'step_end:sign_off=success',
        'step_start:publish',
        'step_end:publish=success',
        'workflow_end=success',
      ]);
      expect(events.map((e) => e.seq)).to.deep.equal(events.map((_, i) => i));
      const start = events.find((e) => e.type === 'step_start' && e.step === 'sign_off');
      expect(start).to.include({ agent: 'human' });
      expect(start).to.have.deep.property('input', {
        prompt: 'Approve the release notes for 1.2? (notes for 1.2)',
      });
      const decision = events.find((e) => e.type === 'approval_decision');
      expect(withoutTimestamp(decision!)).to.deep.equal({
        type: 'approval_decision',
        run_id: 'human-1',
        seq: decision!.seq,
        step: 'sign_off',
        tool_name: 'human',
        call_id: id,
        kind: 'input',
        decision: 'approve',
        provider: 'human',
        reason: 'answered',
        answer: { approved: true, note: 'ship it' },
      });

      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      expect(record.status).to.equal('success');
      expect(record.final_output).to.deep.equal({ approved: true });
      const step = record.steps.find((s) => s.step_name === 'sign_off')!;
      expect(step).to.deep.include({
        agent: 'human',
        status: 'success',
        output: { approved: true, note: 'ship it' },
        input: { prompt: 'Approve the release notes for 1.2? (notes for 1.2)' },
      });
      expect(record.steps.find((s) => s.step_name === 'publish')!.input).to.deep.equal({
        approved: true,
      });

      // A late joiner's replay, rebuilt from the file: the live step events (the file keeps no
      // approval events, as for tool calls).
      const [file] = await runFiles(runsDir);
      const rebuilt = replayFromRecord(file!.record, file!.name);
      const stepEvents = events
        .filter((e) => e.type !== 'approval_required' && e.type !== 'approval_decision')
        .map((event, seq) => ({ ...event, seq }));
      expect(JSON.parse(JSON.stringify(rebuilt.map(withoutTimestamp)))).to.deep.equal(
        JSON.parse(JSON.stringify(stepEvents.map(withoutTimestamp))),
      );
    });

    it('fails the step when nobody answers within timeout_seconds (on_timeout: fail)', async () => {
      const clock = new TestClock(CLOCK_START);
      const rt = make({ clock });
      const { handle, events, collected, required } = await asked(rt, TIMED('fail'));
      expect(required).to.include({
        expires_at: new Date(CLOCK_START + 5000).toISOString(),
      });
      expect(rt.approvals.pending()[0]).to.include({ expiresAt: CLOCK_START + 5000 });
      clock.increment(5000);
      const record = await handle.done;
      await collected;
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:ask',
        'approval_required:ask',
        'approval_decision:ask',
        'step_error:ask=failed',
        'step_end:ask=failed',
        'step_end:after=skipped',
        'workflow_end=failed',
      ]);
      expect(events.find((e) => e.type === 'approval_decision')).to.include({
        decision: 'deny',
        reason: 'no answer within 5s (timed out)',
      });
      expect(record.steps[0]).to.include({
        status: 'failed',
        error: 'no answer within 5s (timed out)',
      });
      expect(record.steps[0]!.metadata).to.include({ attempts: 1 });
      expect(rt.approvals.pending()).to.deep.equal([]);
      expect(
        rt.approvals.respond(required.type === 'approval_required' ? required.call_id : '', {
          approved: true,
        }),
      ).to.equal('already_decided');
      expect(clock.pending()).to.equal(0);
    });

    it('takes the default answer when nobody answers in time (on_timeout: default)', async () => {
      const clock = new TestClock(CLOCK_START);
      const rt = make({ clock });
      const { handle, events, collected } = await asked(rt, TIMED('default'));
      clock.increment(5000);
      const record = await handle.done;
      await collected;
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:ask',
        'approval_required:ask',
        'approval_decision:ask',
        'step_end:ask=success',
        'step_start:after',
        'step_end:after=success',
        'workflow_end=success',
      ]);
      expect(events.find((e) => e.type === 'approval_decision')).to.deep.include({
        decision: 'approve',
        reason: 'no answer within 5s (timed out): the default answer',
        answer: { approved: false, note: 'nobody answered' },
      });
      expect(record.steps[0]).to.deep.include({
        status: 'success',
        output: { approved: false, note: 'nobody answered' },
      });
    });

    it('cancel: the question leaves the listing, the step fails with the cancel reason', async () => {
      const rt = make();
      const { handle, events, collected, required } = await asked(rt, SIGN_OFF);
      expect(rt.approvals.pending()).to.have.length(1);
      expect(rt.cancel(handle.runId, 'not needed any more')).to.equal(true);
      const record = await handle.done;
      await collected;
      expect(rt.approvals.pending()).to.deep.equal([]);
      const id = required.type === 'approval_required' ? required.call_id : '';
      expect(rt.approvals.respond(id, { approved: true })).to.equal('already_decided');
      expect(record.status).to.equal('failed');
      expect(record.steps.map((s) => [s.step_name, s.status, s.error])).to.deep.equal([
        ['draft', 'success', null],
        ['sign_off', 'failed', 'not needed any more'],
        ['publish', 'skipped', null],
      ]);
      expect(sequence(events, true)).to.deep.equal([
        'workflow_start',
        'step_start:draft',
        'step_end:draft=success',
        'step_start:sign_off',
        'approval_required:sign_off',
        'approval_decision:sign_off',
        'step_error:sign_off=failed',
        'step_end:sign_off=failed',
        'step_end:publish=skipped',
        'workflow_end=failed',
      ]);
      expect(events.find((e) => e.type === 'approval_decision')).to.include({
        decision: 'deny',
        reason: 'not needed any more while waiting for an answer',
      });
    });

    it('a resumed question keeps its first requested_at, and its timeout counts from it', async () => {
      const workflowsDir = join(runsDir, '..', `${adapter}-human-timed-workflows`);
      await mkdir(workflowsDir, { recursive: true });
      await writeFile(join(workflowsDir, 'timed_fail.yaml'), TIMED('fail'));
      // The process was down a while: each restart's clock is ahead of the real one (real timers).
      const ahead = (ms: number): EngineClock => ({ ...systemClock, now: () => Date.now() + ms });
      let requestedAt: number | undefined;
      try {
        for (const [restart, downMs] of [0, 1000, 600_000].entries()) {
          const rt = make({ workflowsDir, resume: 'auto', clock: ahead(downMs) });
          const ended = nextEvent(
            (listener) => rt.subscribe(listener),
            (event) => event.type === 'workflow_end' && event.run_id === 'timed-1',
          );
          const question = nextEvent(
            (listener) => rt.subscribe(listener),
            (event) => event.type === 'approval_required' && event.run_id === 'timed-1',
          );
          if (restart === 0) await rt.start({ workflow: 'timed_fail', runId: 'timed-1' });
          const asked = await question;
          if (restart === 2) {
            // Its 5 s ran out while the process was down: it times out as soon as it is asked.
            expect(await ended).to.include({ status: 'failed' });
            break;
          }
          const [pending] = rt.approvals.pending();
          requestedAt ??= pending!.requestedAt;
          // Asked again at a restart, with the first ask's time and deadline.
          expect(pending).to.include({ requestedAt, expiresAt: requestedAt + 5000 });
          expect(asked).to.include({ expires_at: new Date(requestedAt + 5000).toISOString() });
          await rt.shutdown({ graceMs: 0 });
          runtimes.splice(runtimes.indexOf(rt), 1);
          for (const name of await readdir(runsDir)) {
            if (name.endsWith('.owner')) await unlink(join(runsDir, name));
          }
        }
        const files = await runFiles(runsDir);
        const { record } = files.find((f) => f.record.run_id === 'timed-1')!;
        expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
        expect(record.steps[0]).to.include({
          status: 'failed',
          error: 'no answer within 5s (timed out)',
        });
      } finally {
        await removeDir(workflowsDir);
      }
    });

    it('a run left waiting at a shutdown asks again with the same id when resumed, twice, and takes the answer', async () => {
      const workflowsDir = join(runsDir, '..', `${adapter}-human-workflows`);
      await mkdir(workflowsDir, { recursive: true });
      await writeFile(join(workflowsDir, 'sign_off.yaml'), SIGN_OFF);
      const id = humanRequestId('left-1', 'sign_off');
      try {
        for (let restart = 0; restart < 3; restart++) {
          const rt = make({ workflowsDir, resume: 'auto' });
          const question = nextEvent(
            (listener) => rt.subscribe(listener),
            (event) => event.type === 'approval_required' && event.run_id === 'left-1',
          );
          if (restart === 0) await rt.start({ workflow: 'sign_off', runId: 'left-1' });
          expect(await question).to.include({ call_id: id });
          expect(rt.approvals.pending().map((p) => p.callId)).to.deep.equal([id]);
          if (restart === 2) {
            const ended = nextEvent(
              (listener) => rt.subscribe(listener),
              (event) => event.type === 'workflow_end' && event.run_id === 'left-1',
            );
            expect(rt.approvals.respond(id, { approved: false })).to.equal('decided');
            expect(await ended).to.include({ status: 'success' });
            break;
          }
          await rt.shutdown({ graceMs: 0 });
          runtimes.splice(runtimes.indexOf(rt), 1);
          for (const name of await readdir(runsDir)) {
            if (name.endsWith('.owner')) await unlink(join(runsDir, name));
          }
        }
        const files = await runFiles(runsDir);
        const { record } = files.find((f) => f.record.run_id === 'left-1')!;
        expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
        expect(record.status).to.equal('success');
        expect(record.steps.map((s) => [s.step_name, s.status, s.metadata.attempts])).to.deep.equal(
          [
            ['draft', 'success', 1],
            ['sign_off', 'success', 3],
            ['publish', 'success', 1],
          ],
        );
        expect(record.steps[1]!.output).to.deep.equal({ approved: false });
        expect((record.extra as { resumes: unknown[] }).resumes).to.have.length(2);
      } finally {
        await removeDir(workflowsDir);
      }
    });
  });
}
