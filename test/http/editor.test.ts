import { expect } from 'chai';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { call, startTestService, type TestService } from './harness.js';

const YAML = `# keep this comment
name: hello_flow
description: A tiny workflow.
steps:
  - name: first   # and this one
    agent: tier0_echo
    description: Echo.
    inputs:
      text: hi
  - name: second
    agent: tier0_counter
    description: Count.
    depends_on: [first]
    inputs:
      text: \${steps.first.outputs.text}
`;

describe('HTTP workflow editor endpoints', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService();
  });
  afterEach(async () => {
    await svc.dispose();
  });

  it('GET /api/workflows/{name}/editor answers the document, raw YAML and step count', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/test_deterministic/editor');
    expect(res.status).to.equal(200);
    const body = res.body as Record<string, unknown>;
    const text = await readFile(join(svc.workflowsDir, 'test_deterministic.yaml'), 'utf8');
    expect(body).to.have.all.keys('name', 'path', 'yaml_text', 'document', 'step_count');
    expect(body.name).to.equal('test_deterministic');
    expect(body.yaml_text).to.equal(text);
    expect(body.step_count).to.equal(3);
    expect((body.document as { name: string }).name).to.equal('test_deterministic');
  });

  it('GET editor answers 422 for a file that does not validate', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(svc.workflowsDir, 'broken.yaml'), 'name: broken\nsteps: []\n');
    const res = await call(svc.url, 'GET', '/api/workflows/broken/editor');
    expect(res.status).to.equal(422);
    expect((res.body as { detail: unknown[] }).detail).to.be.an('array').that.is.not.empty;
  });

  it('PUT with yaml_text saves the text verbatim, comments included', async () => {
    const res = await call(svc.url, 'PUT', '/api/workflows/hello_flow', { yaml_text: YAML });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ name: 'hello_flow', yaml_text: YAML, step_count: 2 });
    expect(await readFile(join(svc.workflowsDir, 'hello_flow.yaml'), 'utf8')).to.equal(YAML);
    const list = await call(svc.url, 'GET', '/api/workflows');
    expect((list.body as { workflows: string[] }).workflows).to.include('hello_flow');
  });

  it('PUT accepts source as an alias of yaml_text, and a document (serialized to YAML)', async () => {
    const alias = await call(svc.url, 'PUT', '/api/workflows/hello_flow', { source: YAML });
    expect(alias.status).to.equal(200);
    const document = (alias.body as { document: Record<string, unknown> }).document;
    const again = await call(svc.url, 'PUT', '/api/workflows/hello_flow', {
      document: { ...document, description: 'Changed.' },
    });
    expect(again.status).to.equal(200);
    const saved = await readFile(join(svc.workflowsDir, 'hello_flow.yaml'), 'utf8');
    expect(saved).to.include('description: Changed.');
    expect((again.body as { yaml_text: string }).yaml_text).to.equal(saved);
  });

  it('PUT answers 422 for a name mismatch, a cycle, bad YAML and a bad body', async () => {
    const mismatch = await call(svc.url, 'PUT', '/api/workflows/other_name', { yaml_text: YAML });
    expect(mismatch.status).to.equal(422);
    const cyclic = YAML.replace('    inputs:\n      text: hi\n', '    depends_on: [second]\n');
    const cycle = await call(svc.url, 'PUT', '/api/workflows/hello_flow', { yaml_text: cyclic });
    expect(cycle.status).to.equal(422);
    const details = (cycle.body as { detail: { msg: string; type: string }[] }).detail;
    expect(details.some((d) => /cycle/.test(d.type) || /cycle/.test(d.msg))).to.equal(true);
    const bad = await call(svc.url, 'PUT', '/api/workflows/hello_flow', { yaml_text: 'a: [' });
    expect(bad.status).to.equal(422);
    const both = await call(svc.url, 'PUT', '/api/workflows/hello_flow', {
      yaml_text: YAML,
      source: YAML,
    });
    expect(both.status).to.equal(422);
    const none = await call(svc.url, 'PUT', '/api/workflows/hello_flow', {});
    expect(none.status).to.equal(422);
    expect(none.body).to.deep.equal({
      detail: [
        {
          loc: ['body'],
          msg: 'Give exactly one of document, yaml_text or source',
          type: 'missing',
        },
      ],
    });
    await expectAbsent(join(svc.workflowsDir, 'hello_flow.yaml'));
  });

  it('PUT answers 503 when the workflows directory cannot be written', async () => {
    await rm(svc.workflowsDir, { recursive: true, force: true });
    const res = await call(svc.url, 'PUT', '/api/workflows/hello_flow', { yaml_text: YAML });
    expect(res.status).to.equal(503);
    expect(res.body).to.have.property('detail').that.is.a('string');
  });

  it('PUT /api/workflows/{name}.yaml stores <name>.yaml and answers a relative path', async () => {
    const res = await call(svc.url, 'PUT', '/api/workflows/hello_flow.yaml', { yaml_text: YAML });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ name: 'hello_flow', path: 'hello_flow.yaml' });
    expect(await readFile(join(svc.workflowsDir, 'hello_flow.yaml'), 'utf8')).to.equal(YAML);
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(svc.workflowsDir)).to.not.include('hello_flow.yaml.yaml');
  });

  it('GET editor answers the path relative to the workflows directory', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/test_deterministic/editor');
    expect((res.body as { path: string }).path).to.equal('test_deterministic.yaml');
  });

  it('PUT /api/workflows/agents saves an ordinary workflow named agents', async () => {
    const text = YAML.replace('name: hello_flow', 'name: agents');
    const res = await call(svc.url, 'PUT', '/api/workflows/agents', { yaml_text: text });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ name: 'agents', path: 'agents.yaml' });
    const list = await call(svc.url, 'GET', '/api/workflows');
    expect((list.body as { workflows: string[] }).workflows).to.include('agents');
    expect((await call(svc.url, 'GET', '/api/agents')).status).to.equal(200);
  });

  it('POST /api/workflows/validate answers valid, name, step_count and yaml_text', async () => {
    const res = await call(svc.url, 'POST', '/api/workflows/validate', { yaml_text: YAML });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      valid: true,
      name: 'hello_flow',
      step_count: 2,
      yaml_text: YAML,
    });
    await expectAbsent(join(svc.workflowsDir, 'hello_flow.yaml'));
  });

  it('POST /api/workflows/validate answers 422 with the error list', async () => {
    const unknownDep = YAML.replace('depends_on: [first]', 'depends_on: [ghost]');
    const res = await call(svc.url, 'POST', '/api/workflows/validate', { source: unknownDep });
    expect(res.status).to.equal(422);
    const details = (res.body as { detail: { loc: unknown[]; msg: string; type: string }[] })
      .detail;
    expect(details).to.be.an('array').that.is.not.empty;
    for (const d of details) expect(d).to.have.all.keys('loc', 'msg', 'type');
    expect(JSON.stringify(details)).to.include('ghost');
  });

  it('workflow YAML with ordinary words is not blocked by sanitization', async () => {
    const prose = YAML.replace(
      'description: A tiny workflow.',
      'description: Guidance for redundant systems; ignore nothing, the system prompt is ours.',
    );
    const res = await call(svc.url, 'POST', '/api/workflows/validate', { yaml_text: prose });
    expect(res.status).to.equal(200);
  });
});

async function expectAbsent(path: string): Promise<void> {
  const error = await readFile(path).then(
    () => undefined,
    (e: NodeJS.ErrnoException) => e,
  );
  expect(error?.code).to.equal('ENOENT');
}
