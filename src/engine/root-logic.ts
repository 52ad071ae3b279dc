import type { ActorLogic, AnyEventObject, Snapshot } from 'xstate';

type RootSnapshot = Snapshot<undefined>;

/**
 * The runtime's root actor: the parent of every run actor, so one runtime is one XState system
 * (one inspector sees every run). It keeps no state: run actors report `xstate.done.actor.*`
 * to it and it forgets them, so nothing is retained per finished run.
 */
export function createRootLogic(): ActorLogic<RootSnapshot, AnyEventObject, undefined> {
  return {
    config: { name: 'agentic-runtime' },
    getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined }),
    transition: (snapshot, event) =>
      event.type === 'xstate.stop'
        ? { status: 'stopped', output: undefined, error: undefined }
        : snapshot,
    getPersistedSnapshot: (snapshot) => snapshot,
  };
}
