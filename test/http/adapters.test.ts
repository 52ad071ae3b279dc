import { expect } from 'chai';
import { AdapterUnavailableError, ConfigError } from '../../src/errors.js';
import { loadAdapters } from '../../src/http/adapters.js';
import type { CompiledWorkflow } from '../../src/workflow/index.js';

describe('adapter start-up check', () => {
  const broken = (failing: string) => (name: string) =>
    name === failing
      ? Promise.reject(new Error(`Cannot find package 'xstate'`))
      : Promise.resolve({ graphMachineDefinition: () => ({ id: 'm' }) });

  it('refuses to start when the default adapter cannot be loaded, with an install hint', async () => {
    const error = await loadAdapters('graph', broken('graph')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as ConfigError).message).to.match(/AGENTIC_DEFAULT_ADAPTER=graph.*npm install/s);
  });

  it('starts with native as default when graph is broken; the machine endpoint is then 501', async () => {
    const adapters = await loadAdapters('native', broken('graph'));
    expect(() => adapters.machineDefinition({} as CompiledWorkflow)).to.throw(
      AdapterUnavailableError,
    );
  });

  it('loads both real adapters', async () => {
    const adapters = await loadAdapters('graph');
    expect(adapters.machineDefinition).to.be.a('function');
  });
});
