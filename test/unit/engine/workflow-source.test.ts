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

  it('notices changes deep inside a document, added and removed keys, and a changed key order', async () => {
    const cache = new CompiledCache();
    const doc: WorkflowDocument = {
      name: 'a',
      steps: [
        { name: 's', agent: 'tier0_echo' },
        { name: 't', agent: 'tier0_echo', depends_on: ['s'] },
        { name: 'u', agent: 'tier0_echo' },
      ],
    };
    const first = await loadWorkflowSource(doc, registry, cache);
    // A dependency added inside a nested array.
    doc.steps[2]!.depends_on = [];
    doc.steps[2]!.depends_on.push('t');
    const second = await loadWorkflowSource(doc, registry, cache);
    expect(second).to.not.equal(first);
    expect(second.steps[2]?.dependsOn).to.deep.equal(['t']);
    expect(await loadWorkflowSource(doc, registry, cache)).to.equal(second);
    // A key removed.
    delete doc.steps[2]!.depends_on;
    const third = await loadWorkflowSource(doc, registry, cache);
    expect(third.steps[2]?.dependsOn).to.deep.equal([]);
    // The same keys in another order are another JSON text, compiled again.
    doc.steps[0] = { agent: 'tier0_echo', name: 's' };
    const fourth = await loadWorkflowSource(doc, registry, cache);
    expect(fourth).to.not.equal(third);
    expect(await loadWorkflowSource(doc, registry, cache)).to.equal(fourth);
    // A key whose value JSON leaves out: not the remembered shape, but the same JSON text.
    (doc.steps[1] as unknown as Record<string, unknown>).description = undefined;
    expect(await loadWorkflowSource(doc, registry, cache)).to.equal(fourth);
    // A value replaced by an equal one: still the same document.
    delete (doc.steps[1] as unknown as Record<string, unknown>).description;
    doc.steps[1]!.depends_on = ['s'];
    expect(await loadWorkflowSource(doc, registry, cache)).to.equal(fourth);
  });
});
