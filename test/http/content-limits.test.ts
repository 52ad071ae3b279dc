import { expect } from 'chai';
import { request } from 'node:http';
import { startTestService, type TestService } from './harness.js';

const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('HTTP content limits (AGENTIC_MAX_*_BYTES)', () => {
  let h: TestService | undefined;
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
  });

  it('applies the configured YAML bounds to PUT and validate, and refuses custom tags', async () => {
    h = await startTestService({
      env: { AGENTIC_MAX_YAML_BYTES: '4096', AGENTIC_MAX_EXPANDED_YAML_BYTES: '2048' },
    });
    const anchor = `x: &a "${'y'.repeat(300)}"\n`;
    const aliased = `name: aliased\n${anchor}steps: [{name: s, agent: tier0_echo, inputs: {v: [${Array(10).fill('*a').join(', ')}]}}]\n`;
    const validate = await fetch(`${h.url}/api/workflows/validate`, json({ yaml_text: aliased }));
    expect(validate.status).to.equal(422);
    expect(await validate.json()).to.deep.equal({
      detail: [
        {
          loc: ['yaml_text'],
          msg: 'invalid YAML: more than 2048 bytes once its aliases are expanded (AGENTIC_MAX_EXPANDED_YAML_BYTES)',
          type: 'value_error.yaml',
        },
      ],
    });
    const long = `name: long\ndescription: "${'d'.repeat(5000)}"\nsteps: [{name: s, agent: tier0_echo}]\n`;
    const put = await fetch(`${h.url}/api/workflows/long`, {
      ...json({ yaml_text: long }),
      method: 'PUT',
    });
    expect(put.status).to.equal(422);
    expect(JSON.stringify(await put.json())).to.contain('more than 4096 (AGENTIC_MAX_YAML_BYTES)');
    const tagged =
      'name: tagged\nsteps: [{name: s, agent: tier0_echo, inputs: {f: !!js/function "x"}}]\n';
    const refused = await fetch(`${h.url}/api/workflows/validate`, json({ yaml_text: tagged }));
    expect(refused.status).to.equal(422);
    expect(JSON.stringify(await refused.json())).to.contain(
      'unsupported tag: tag:yaml.org,2002:js/function',
    );
  });

  it('refuses 16 000 and 100 000 aliases (validate and PUT) with 422 while health keeps answering', async () => {
    h = await startTestService();
    const url = h.url;
    for (const count of [16_000, 100_000]) {
      const yaml = `name: many\nx: &a [1]\nsteps: [{name: s, agent: tier0_echo, inputs: {v: [${Array(count).fill('*a').join(',')}]}}]\n`;
      const body = JSON.stringify({ yaml_text: yaml });
      for (const [method, path] of [
        ['POST', '/api/workflows/validate'],
        ['PUT', '/api/workflows/many'],
      ] as const) {
        // Half the body is sent, health is asked and answered, then the rest goes: the request
        // is in flight all along, and its answer must come (it took 24 s for 16 000 aliases and
        // more than 15 minutes for 100 000, with the loop blocked).
        const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = request(`${url}${path}`, {
            method,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          });
          req.on('error', reject);
          req.on('response', (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          });
          req.write(body.slice(0, body.length / 2));
          fetch(`${url}/api/health`)
            .then((health) => {
              expect(health.status).to.equal(200);
              req.end(body.slice(body.length / 2));
            })
            .catch(reject);
        });
        const { status, text } = await answer;
        expect(status, `${method} ${path} with ${count} aliases`).to.equal(422);
        expect(JSON.parse(text)).to.deep.equal({
          detail: [
            {
              loc: ['yaml_text'],
              msg: 'invalid YAML: more than 100 aliases',
              type: 'value_error.yaml',
            },
          ],
        });
        expect((await fetch(`${url}/api/health`)).status).to.equal(200);
      }
    }
  }).timeout(120_000);

  it('fails a step over AGENTIC_MAX_TEMPLATE_BYTES and truncates run inputs over AGENTIC_MAX_STEP_IO_BYTES', async () => {
    h = await startTestService({
      env: { AGENTIC_MAX_TEMPLATE_BYTES: '4096', AGENTIC_MAX_STEP_IO_BYTES: '2048' },
    });
    const yaml = [
      'name: bounded',
      'inputs: { t: { type: string } }',
      'steps:',
      `  - { name: many, agent: tier0_echo, inputs: { x: "${'${inputs.t}'.repeat(10)}" } }`,
      "  - { name: one, agent: tier0_echo, inputs: { x: '${inputs.t}', y: 1 } }",
      '',
    ].join('\n');
    const put = await fetch(`${h.url}/api/workflows/bounded`, {
      ...json({ yaml_text: yaml }),
      method: 'PUT',
    });
    expect(put.status).to.equal(200);
    const run = await fetch(
      `${h.url}/api/run`,
      json({ workflow: 'bounded', run_id: 'b1', input_data: { t: 'q'.repeat(3000) } }),
    );
    expect(run.status).to.equal(200);
    const record = await h.finished('b1');
    expect(record.steps.map((step) => [step.step_name, step.status, step.error])).to.deep.equal([
      [
        'many',
        'failed',
        'inputs: rendered template exceeds 4096 bytes (AGENTIC_MAX_TEMPLATE_BYTES)',
      ],
      ['one', 'success', null],
    ]);
    const truncated = { __truncated__: true, bytes: 3002, preview: 'q'.repeat(200) };
    expect(record.steps[1]?.input).to.deep.equal({ x: truncated, y: 1 });
    expect(record.steps[1]?.output).to.deep.equal({ x: truncated, y: 1 });
    expect(record.extra.warnings).to.deep.equal([
      'steps.one.input entries x truncated (AGENTIC_MAX_STEP_IO_BYTES)',
    ]);
  });
});
