import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../../src/config/index.js';
import * as api from '../../../src/index.js';
import {
  createRuntime,
  ValidationError,
  type ErrorDetail,
  type RunActor,
  type RunResult,
} from '../../../src/index.js';

describe('public API', () => {
  it('types the run actor from the run logic', async () => {
    const runtime = createRuntime({ persist: false });
    try {
      const handle = await runtime.start({
        workflow: 'name: t\nsteps:\n  - { name: a, agent: tier0_echo }\n',
      });
      const actor: RunActor = handle.actor;
      // @ts-expect-error: not a state of the run actor (an AnyActorRef would accept anything)
      actor.getSnapshot().matches('no_such_state');
      const record = await handle.done;
      const snapshot = actor.getSnapshot();
      expect(snapshot.matches('success')).to.equal(true);
      const output: RunResult | undefined = snapshot.output;
      expect(output?.status).to.equal(record.status);
    } finally {
      await runtime.shutdown();
    }
  });

  it('ValidationError always carries its details', async () => {
    const runtime = createRuntime({ persist: false });
    try {
      const error = await runtime
        .run({ workflow: 'test_deterministic', input: { label: 'nope' } })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      expect(error).to.be.instanceOf(ValidationError);
      const details: ErrorDetail[] = (error as ValidationError).details;
      expect(details[0]?.loc).to.deep.equal(['input', 'label']);
    } finally {
      await runtime.shutdown();
    }
  });

  it('keeps engine internals out of the entry point and its published types', async () => {
    expect(Object.keys(api)).to.include.members(['createRuntime', 'ValidationError', 'AppError']);
    expect(Object.keys(api)).not.to.include('runMachine');
    // `npm test` builds dist/ before mocha: the declarations a user's compiler reads.
    const published = await readFile(join(packageRoot, 'dist', 'src', 'index.d.ts'), 'utf8');
    for (const internal of ['EngineInput', 'AttemptRunner', 'AttemptResult', 'runMachine']) {
      expect(published, internal).not.to.match(new RegExp(`\\b${internal}\\b`));
    }
    expect(published).to.match(/\bRunActor\b/);
  });
});
