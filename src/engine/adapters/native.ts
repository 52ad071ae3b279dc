import { createNativeSchedulerLogic } from '../../../machines/native-scheduler.logic.js';
import { isTruthy } from '../../workflow/values.js';
import type { EngineLogic } from '../../../machines/engine-contract.js';
import type { EngineAdapter } from '../adapter.js';

const logic: EngineLogic = createNativeSchedulerLogic({ isTruthy });

/**
 * The native adapter: the dependency-counting scheduler actor. One logic object serves every
 * workflow (the workflow arrives in the engine input).
 */
export const nativeAdapter: EngineAdapter = {
  name: 'native',
  description: 'Dependency-counting DAG scheduler: ready steps in YAML order, bounded concurrency',
  createLogic: () => logic,
};
