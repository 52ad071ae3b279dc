import { expect } from 'chai';
import { CompiledCache, loadWorkflowSource } from '../../../src/engine/workflow-source.js';
import { createWorkflowRegistry } from '../../../src/workflow/index.js';
import type { WorkflowDocument } from '../../../src/workflow/types.js';

describe('loadWorkflowSource (inline documents)', () => {
  const registry = createWorkflowRegistry({ dir: '/nonexistent-workflows-dir' });

  it('returns the same compilation for the same unchanged document object', async () => {
    const cache = new CompiledCache();
    const doc: WorkflowDocument = { name: 'a', steps: [{ name: 's', agent: 'tier0_echo' }] };
    const first = await loadWorkflowSource(doc, registry, cache);
    expect(await loadWorkflowSource(doc, registry, cache)).to.equal(first);
    // An equal but distinct object shares it through the content key.
    expect(await loadWorkflowSource(structuredClone(doc), registry, cache)).to.equal(first);
  });

  it('recompiles a document object that was changed after it was compiled', async () => {
    const cache = new CompiledCache();
    const doc: WorkflowDocument = { name: 'a', steps: [{ name: 's', agent: 'tier0_echo' }] };
    const first = await loadWorkflowSource(doc, registry, cache);
    doc.steps.push({ name: 't', agent: 'tier0_echo', depends_on: ['s'] });
    const second = await loadWorkflowSource(doc, registry, cache);
    expect(second).to.not.equal(first);
    expect(second.steps.map((s) => s.name)).to.deep.equal(['s', 't']);
    const step = doc.steps[1];
    if (step === undefined) throw new Error('missing step');
    step.when = 'false';
    const third = await loadWorkflowSource(doc, registry, cache);
    expect(third).to.not.equal(second);
    expect(third.steps[1]?.when).to.not.equal(undefined);
    doc.name = 'b';
    expect((await loadWorkflowSource(doc, registry, cache)).name).to.equal('b');
  });
});
