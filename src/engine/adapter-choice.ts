/**
 * Which adapter a run asked for: the runtime checks it when it starts a run, and an api
 * instance (`AGENTIC_ROLE=api`) before it queues one, so both refuse a bad name alike.
 */
import { isAdapterName } from '../config/adapter-names.js';
import { AppError, ERROR_CODES } from '../errors.js';
import { ADAPTERS, type AdapterName } from './types.js';

/** The adapter of a run (`name`, else the default), or a 422 naming the adapters there are. */
export function chooseAdapter(name: string | undefined, defaultAdapter: AdapterName): AdapterName {
  const adapterName = name ?? defaultAdapter;
  if (!isAdapterName(adapterName)) {
    const msg = `unknown adapter '${adapterName}'; adapters are ${ADAPTERS.join(', ')}`;
    throw new AppError(ERROR_CODES.ADAPTER_UNKNOWN, msg, {
      status: 422,
      details: [{ loc: ['adapter'], msg, type: 'value_error.adapter' }],
    });
  }
  return adapterName;
}
