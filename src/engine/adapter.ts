/**
 * An engine adapter as the runtime knows it: a name from the config schema's enum and the engine
 * actor logic it supplies. The contract that logic keeps (input, output, emitted events, step
 * outcome, clock) is `machines/engine-contract.ts`.
 */
import type { CompiledWorkflow } from '../workflow/types.js';
import type { EngineLogic } from '../../machines/engine-contract.js';
import type { AdapterName } from './types.js';

export interface EngineAdapter {
  readonly name: AdapterName;
  readonly description: string;
  /** The engine actor logic; for graph, built per workflow. */
  createLogic(workflow: CompiledWorkflow): EngineLogic;
}
