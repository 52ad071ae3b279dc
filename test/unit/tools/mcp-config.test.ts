import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wireToolNames } from '../../../src/agents/tool-wire-names.js';
import { loadConfig } from '../../../src/config/index.js';
import { AppError } from '../../../src/errors.js';
import { toolsOptionsFromConfig } from '../../../src/tools/index.js';
import { loadMcpConfig } from '../../../src/tools/mcp/mcp-config.js';

describe('MCP servers file (AGENTIC_MCP_CONFIG)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-mcp-config-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function problem(yaml: string): Promise<string> {
    const file = join(dir, 'mcp.yaml');
    await writeFile(file, yaml);
    try {
      loadMcpConfig(file);
    } catch (error) {
      expect(error).to.be.instanceOf(AppError);
      return (error as Error).message;
    }
    throw new Error('accepted');
  }

  it('is read and checked at start-up (tool options of the config), defaults applied', async () => {
    const file = join(dir, 'mcp.yaml');
    await writeFile(
      file,
      `servers:
  files:
    transport: stdio
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", /srv]
    high_risk: [write_file]
  search:
    transport: http
    url: https://mcp.example.com/mcp
    headers: { Authorization: { secret: SEARCH_TOKEN, prefix: "Bearer " } }
    timeout_seconds: 5
`,
    );
    const options = toolsOptionsFromConfig(loadConfig({ AGENTIC_MCP_CONFIG: file }));
    const mcp = options.mcp!;
    expect(mcp).to.include({ file, breakerThreshold: 3, breakerCooldownMs: 30_000 });
    expect(
      mcp.servers.map((s) => [s.name, s.transport, s.connectTimeoutMs, s.timeoutMs]),
    ).to.deep.equal([
      ['files', 'stdio', 10_000, undefined],
      ['search', 'http', 10_000, 5000],
    ]);
    expect([...mcp.servers[0]!.highRisk]).to.deep.equal(['write_file']);
  });

  it('names the file and the key of each mistake', async () => {
    const message = await problem(`servers:
  files:
    transport: stdio
    args: [x]
  web:
    transport: http
    url: ftp://nope
    headers: { Authorization: "Bearer literal" }
  Bad:Name:
    transport: stdio
    command: x
`);
    expect(message).to.match(/^MCP servers file .*mcp\.yaml: /);
    expect(message).to.contain('servers.files.command: must have required property');
    expect(message).to.contain('servers.web.url: must match pattern');
    expect(message).to.contain('servers.web.headers.Authorization: must be object');
    expect(message).to.contain('servers.Bad:Name: not a valid name');
  });

  it('refuses a literal credential in a stdio server environment', async () => {
    expect(
      await problem(`servers:
  gh:
    transport: stdio
    command: github-mcp
    env: { GITHUB_TOKEN: ghp_literal }
`),
    ).to.contain('servers.gh.env.GITHUB_TOKEN: looks like a credential');
  });

  it('stops start-up when the file cannot be read', () => {
    const config = loadConfig({ AGENTIC_MCP_CONFIG: join(dir, 'absent.yaml') });
    expect(() => toolsOptionsFromConfig(config)).to.throw(
      AppError,
      /MCP servers file .*absent\.yaml: ENOENT/,
    );
  });
});

describe('tool names offered to models', () => {
  it('keeps built-in names and maps mcp:<server>:<tool> to a provider-safe name', () => {
    const long = `mcp:server:${'x'.repeat(80)}`;
    const wire = wireToolNames(['file_read', 'mcp:files:read_text_file', 'mcp:a.b:c/d', long]);
    const names = [...wire.keys()];
    expect(names.slice(0, 3)).to.deep.equal([
      'file_read',
      'mcp__files__read_text_file',
      'mcp__a_b__c_d',
    ]);
    expect(names[3])
      .to.match(/^mcp__server__x+_[0-9a-f]{8}$/)
      .and.have.length(64);
    expect(wire.get('mcp__files__read_text_file')).to.equal('mcp:files:read_text_file');
    for (const name of names) expect(name).to.match(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/);
  });
});
