import { expect } from 'chai';
import { childProcessEnv } from '../../../src/config/child-env.js';
import { loadConfig } from '../../../src/config/index.js';
import { ConfigError } from '../../../src/errors.js';
import { toolsOptionsFromConfig } from '../../../src/tools/index.js';

describe('config: tool variables', () => {
  it('defaults to denied approvals, no commands, 1 MiB, 30 s, 5 redirects, and agent loops of 8 rounds × 12 calls with 12,000-character results', () => {
    const config = loadConfig({}, '/srv');
    expect(toolsOptionsFromConfig(config)).to.deep.equal({
      shellAllowedCommands: [],
      blockPrivateIps: false,
      approval: 'deny',
      approvalAllowedTools: [],
      approvalTimeoutMs: 300_000,
      approvalEventArguments: false,
      childEnv: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      maxBytes: 1048576,
      timeoutMs: 30_000,
      maxRedirects: 5,
      agentMaxRounds: 8,
      agentMaxCallsPerRound: 12,
      toolResultMaxChars: 12_000,
    });
  });

  it('reads every tool variable', () => {
    const config = loadConfig(
      {
        AGENTIC_FILE_BASE_DIR: 'data',
        AGENTIC_SHELL_ALLOWED_COMMANDS: 'git, /usr/bin/ls',
        AGENTIC_BLOCK_PRIVATE_IPS: '1',
        AGENTIC_MEMORY_PATH: 'memory.json',
        AGENTIC_APPROVAL_PROVIDER: 'policy',
        AGENTIC_APPROVAL_ALLOWED_TOOLS: 'file_write,notes:shell',
        AGENTIC_TOOL_MAX_BYTES: '2048',
        AGENTIC_TOOL_TIMEOUT_SECONDS: '1.5',
        AGENTIC_HTTP_MAX_REDIRECTS: '0',
        AGENTIC_APPROVAL_TIMEOUT_SECONDS: '2.5',
        AGENTIC_APPROVAL_EVENT_ARGUMENTS: '1',
        AGENTIC_AGENT_MAX_ROUNDS: '3',
        AGENTIC_AGENT_MAX_CALLS_PER_ROUND: '2',
        AGENTIC_TOOL_RESULT_MAX_CHARS: '500',
      },
      '/srv',
    );
    expect(toolsOptionsFromConfig(config)).to.deep.include({
      fileBaseDir: '/srv/data',
      shellAllowedCommands: ['git', '/usr/bin/ls'],
      blockPrivateIps: true,
      memoryPath: '/srv/memory.json',
      approval: 'policy',
      approvalAllowedTools: ['file_write', 'notes:shell'],
      maxBytes: 2048,
      timeoutMs: 1500,
      maxRedirects: 0,
      approvalTimeoutMs: 2500,
      approvalEventArguments: true,
      agentMaxRounds: 3,
      agentMaxCallsPerRound: 2,
      toolResultMaxChars: 500,
    });
  });

  it('defaults the approval wait to 300 s without arguments in events', () => {
    const config = loadConfig({ AGENTIC_APPROVAL_PROVIDER: 'http' });
    expect(toolsOptionsFromConfig(config)).to.deep.include({
      approval: 'http',
      approvalTimeoutMs: 300_000,
      approvalEventArguments: false,
    });
  });

  it('refuses an unknown approval provider naming the allowed ones', () => {
    expect(() => loadConfig({ AGENTIC_APPROVAL_PROVIDER: 'yes' })).to.throw(
      ConfigError,
      /deny.*auto.*policy.*http/,
    );
  });

  it('gives child processes PATH, HOME and locale only, never keys or tokens', () => {
    const env = childProcessEnv({
      PATH: '/bin',
      HOME: '/home/u',
      LANG: 'C.UTF-8',
      AGENTIC_API_KEY: 'k',
      OPENAI_API_KEY: 'k',
      GITHUB_TOKEN: 't',
      AWS_SECRET_ACCESS_KEY: 's',
      DATABASE_URL: 'postgres://u:p@h/db',
    });
    expect(env).to.deep.equal({ PATH: '/bin', HOME: '/home/u', LANG: 'C.UTF-8' });
  });
});
