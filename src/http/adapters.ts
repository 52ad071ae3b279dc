/**
 * Loads engine adapter modules at start-up. The configured default adapter must load, or the
 * service refuses to start with a configuration error and an install hint (spec: What the
 * service does, 4). The graph module is loaded lazily so a broken install of its dependencies
 * is reported as that error, not as a crash at import time.
 */
import { AdapterUnavailableError, ConfigError, errorMessage } from '../errors.js';
import { ADAPTERS, type AdapterName } from '../engine/types.js';
import type { CompiledWorkflow } from '../workflow/index.js';

type MachineDefinition = (workflow: CompiledWorkflow) => unknown;

export interface LoadedAdapters {
  /** The graph machine's JSON; throws AdapterUnavailableError (501) when graph did not load. */
  machineDefinition: MachineDefinition;
}

const INSTALL_HINT: Record<AdapterName, string> = {
  graph:
    'the graph adapter needs the xstate package: run `npm install` in the service directory, ' +
    'or set AGENTIC_DEFAULT_ADAPTER=native',
  native: 'run `npm install` in the service directory',
};

async function importAdapter(name: AdapterName): Promise<unknown> {
  return name === 'graph'
    ? import('../engine/adapters/graph.js')
    : import('../engine/adapters/native.js');
}

/** @param importer replaces the module loader (tests simulate a broken install). */
export async function loadAdapters(
  defaultAdapter: AdapterName,
  importer: (name: AdapterName) => Promise<unknown> = importAdapter,
): Promise<LoadedAdapters> {
  const failures = new Map<AdapterName, string>();
  let graph: { graphMachineDefinition?: MachineDefinition } | undefined;
  for (const name of ADAPTERS) {
    try {
      const module = await importer(name);
      if (name === 'graph') graph = module as { graphMachineDefinition?: MachineDefinition };
    } catch (error) {
      failures.set(name, errorMessage(error));
    }
  }
  const failed = failures.get(defaultAdapter);
  if (failed !== undefined) {
    throw new ConfigError([
      `AGENTIC_DEFAULT_ADAPTER=${defaultAdapter}: the adapter cannot be loaded (${failed}); ${INSTALL_HINT[defaultAdapter]}.`,
    ]);
  }
  const definition = graph?.graphMachineDefinition;
  return {
    machineDefinition(workflow) {
      if (definition === undefined) {
        throw new AdapterUnavailableError(
          `the graph adapter is unavailable (${failures.get('graph') ?? 'not loaded'}); ${INSTALL_HINT.graph}`,
        );
      }
      return definition(workflow);
    },
  };
}
