import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createToolKit,
  isPrivateAddress,
  ToolError,
  type ToolKit,
  type ToolsOptions,
} from '../../../src/tools/index.js';

const ALL = [
  'file_read',
  'file_list',
  'file_write',
  'file_delete',
  'shell',
  'http_get',
  'http_post',
  'memory_get',
  'memory_set',
  'memory_search',
  'memory_delete',
];

let root: string;
let base: string;
let kit: ToolKit | undefined;
const servers: Server[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tools-'));
  base = join(root, 'base');
  await mkdir(base);
  await writeFile(join(root, 'secret.txt'), 'outside');
});
afterEach(async () => {
  await kit?.close();
  kit = undefined;
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
  await rm(root, { recursive: true, force: true });
});

async function tools(options: ToolsOptions = {}): Promise<ToolKit> {
  await kit?.close();
  kit = await createToolKit({ fileBaseDir: base, approval: 'auto', ...options });
  return kit;
}

function call(name: string, args: unknown, allowed = ALL, workflow = 'wf'): Promise<unknown> {
  if (kit === undefined) throw new Error('no toolkit');
  return kit.call(
    name,
    args,
    { workflow, step: 's', runId: 'r', allowed },
    new AbortController().signal,
  );
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error, 'expected a ToolError').to.be.instanceOf(ToolError);
  return error as ToolError;
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

describe('tools: registry', () => {
  it('denies a tool the step does not list', async () => {
    await tools();
    const error = await failure(call('file_read', { path: 'a' }, ['file_list']));
    expect(error.toolName).to.equal('file_read');
    expect(error.message).to.match(/not allowed/);
  });

  it('refuses bad arguments with a tool error', async () => {
    await tools();
    expect((await failure(call('file_read', { path: 3 }))).message).to.match(/invalid arguments/);
    expect((await failure(call('shell', { argv: [] }))).message).to.match(/invalid arguments/);
    expect((await failure(call('memory_set', { key: 'k' }))).message).to.match(/invalid arguments/);
  });

  it('denies high-risk tools by default (no approval provider) and lets low-risk ones run', async () => {
    kit = await createToolKit({ fileBaseDir: base });
    const error = await failure(call('file_write', { path: 'a.txt', content: 'x' }));
    expect(error.operation).to.equal('approval');
    await writeFile(join(base, 'a.txt'), 'hello');
    expect(await call('file_read', { path: 'a.txt' })).to.deep.equal({
      content: 'hello',
      bytes: 5,
    });
  });

  it('asks a custom approval provider with the call, and runs only what it approves', async () => {
    const asked: Record<string, unknown>[] = [];
    kit = await createToolKit({
      fileBaseDir: base,
      approval: {
        name: 'test',
        decide: (request) => {
          const { signal, callId, ...rest } = request;
          asked.push({ ...rest, aborted: signal.aborted, callId: typeof callId });
          return Promise.resolve({
            approved: request.args.path === 'ok.txt',
            reason: 'test says no',
          });
        },
      },
    });
    expect(await call('file_write', { path: 'ok.txt', content: 'x' })).to.deep.equal({ bytes: 1 });
    const error = await failure(call('file_write', { path: 'no.txt', content: 'x' }));
    expect(error.message).to.equal('tool file_write: denied: test says no');
    await call('file_read', { path: 'ok.txt' });
    expect(asked).to.deep.equal([
      {
        toolName: 'file_write',
        args: { path: 'ok.txt', content: 'x' },
        workflow: 'wf',
        step: 's',
        runId: 'r',
        aborted: false,
        callId: 'string',
      },
      {
        toolName: 'file_write',
        args: { path: 'no.txt', content: 'x' },
        workflow: 'wf',
        step: 's',
        runId: 'r',
        aborted: false,
        callId: 'string',
      },
    ]);
  });

  it("refuses a call its tool would refuse before asking the approval provider, with the tool's own error", async () => {
    const asked: string[] = [];
    const outcomes: string[] = [];
    kit = await createToolKit({
      fileBaseDir: base,
      shellAllowedCommands: ['echo'],
      blockPrivateIps: true,
      onToolCall: (report) => outcomes.push(report.outcome),
      approval: {
        name: 'test',
        decide: (request) => {
          asked.push(`${request.toolName} ${JSON.stringify(request.args)}`);
          return Promise.resolve({ approved: true, reason: 'test approves' });
        },
      },
    });
    const refusals: [string, Record<string, unknown>, string][] = [
      [
        'file_write',
        { path: '../x', content: 'x' },
        'tool file_write: path refused (parent segment)',
      ],
      [
        'file_write',
        { path: join(root, 'x'), content: 'x' },
        'tool file_write: path refused (absolute path)',
      ],
      ['file_delete', { path: '../secret.txt' }, 'tool file_delete: path refused (parent segment)'],
      [
        'shell',
        { argv: ['cat', '/etc/passwd'] },
        "tool shell: command 'cat' is not allowed (AGENTIC_SHELL_ALLOWED_COMMANDS)",
      ],
      ['shell', { argv: ['echo', 'x'], cwd: '..' }, 'tool shell: cwd refused (parent segment)'],
      [
        'http_get',
        { url: 'http://169.254.169.254/latest' },
        'tool http_get: destination 169.254.169.254 is a private address (AGENTIC_BLOCK_PRIVATE_IPS)',
      ],
      [
        'http_post',
        { url: 'file:///etc/passwd', body: 'x' },
        'tool http_post: scheme file: is not allowed',
      ],
    ];
    for (const [name, args, message] of refusals) {
      const error = await failure(call(name, args));
      expect(error.message, name).to.equal(message);
      expect(error.operation, name).to.not.equal('approval');
    }
    expect(asked).to.deep.equal([]);
    expect(outcomes).to.deep.equal(refusals.map(() => 'refused'));
    await symlink(root, join(base, 'out'));
    expect((await failure(call('file_write', { path: 'out/x', content: 'x' }))).message).to.equal(
      'tool file_write: path refused (symlink escape)',
    );
    expect(asked).to.deep.equal([]);
    expect(await call('file_write', { path: 'in.txt', content: 'x' })).to.deep.equal({ bytes: 1 });
    expect(asked).to.deep.equal(['file_write {"path":"in.txt","content":"x"}']);
  });

  it('approves by policy only the listed tools', async () => {
    kit = await createToolKit({
      fileBaseDir: base,
      approval: 'policy',
      approvalAllowedTools: ['wf:file_write'],
    });
    expect(await call('file_write', { path: 'a.txt', content: 'x' })).to.deep.equal({ bytes: 1 });
    await failure(call('file_write', { path: 'a.txt', content: 'x' }, ALL, 'other'));
    await failure(call('file_delete', { path: 'a.txt' }));
  });
});

describe('tools: file tools', () => {
  it('write, read, list and delete inside the base directory', async () => {
    await tools();
    expect(await call('file_write', { path: 'dir/a.txt', content: 'héllo' })).to.deep.equal({
      bytes: 6,
    });
    expect(await call('file_read', { path: 'dir/a.txt' })).to.deep.equal({
      content: 'héllo',
      bytes: 6,
    });
    expect(await call('file_list', { path: 'dir' })).to.deep.equal({
      entries: [{ name: 'a.txt', type: 'file' }],
      truncated: false,
    });
    expect(await call('file_delete', { path: 'dir/a.txt' })).to.deep.equal({ deleted: true });
    expect((await failure(call('file_read', { path: 'dir/a.txt' }))).message).to.match(
      /does not exist/,
    );
  });

  it('reads through a symlink that stays inside the base, and deletes the link, not its target', async () => {
    await tools();
    await writeFile(join(base, 'real.txt'), 'inside');
    await symlink(join(base, 'real.txt'), join(base, 'alias.txt'));
    expect(await call('file_read', { path: 'alias.txt' })).to.deep.equal({
      content: 'inside',
      bytes: 6,
    });
    expect(await call('file_delete', { path: 'alias.txt' })).to.deep.equal({ deleted: true });
    expect(await readFile(join(base, 'real.txt'), 'utf8')).to.equal('inside');
  });

  it('refuses every file operation when AGENTIC_FILE_BASE_DIR is unset', async () => {
    kit = await createToolKit({ approval: 'auto' });
    for (const name of ['file_read', 'file_list', 'file_delete']) {
      expect((await failure(call(name, { path: 'a' }))).message).to.match(/not set/);
    }
  });

  for (const name of ['file_read', 'file_list', 'file_write', 'file_delete']) {
    it(`${name} refuses .., absolute paths, NUL bytes and symlinks out of the base`, async () => {
      await tools();
      await symlink(root, join(base, 'escape'));
      await symlink(join(root, 'secret.txt'), join(base, 'link.txt'));
      const args = (path: string): Record<string, unknown> =>
        name === 'file_write' ? { path, content: 'pwned' } : { path };
      for (const path of [
        '../secret.txt',
        'a/../../secret.txt',
        join(root, 'secret.txt'),
        'a\0b',
        'escape/secret.txt',
        'link.txt',
      ]) {
        const error = await failure(call(name, args(path)));
        expect(error.message, path).to.match(/path refused/);
        expect(error.message).not.to.include(root);
      }
      expect(await readFile(join(root, 'secret.txt'), 'utf8')).to.equal('outside');
    });
  }

  it('caps file sizes', async () => {
    await tools({ maxBytes: 8 });
    expect(
      (await failure(call('file_write', { path: 'a', content: '123456789' }))).message,
    ).to.match(/larger/);
    await writeFile(join(base, 'big'), '123456789');
    expect((await failure(call('file_read', { path: 'big' }))).message).to.match(/larger/);
  });
});

describe('tools: shell', () => {
  it('passes shell metacharacters to the program as literal argv', async () => {
    await tools({ shellAllowedCommands: ['echo'] });
    const argv = ['echo', '$(id)', ';', 'rm', '-rf', '*', '|', 'cat', '`x`', '&&', '>', 'out'];
    const result = (await call('shell', { argv })) as Record<string, unknown>;
    expect(result).to.deep.equal({
      exit_code: 0,
      signal: null,
      stdout: `${argv.slice(1).join(' ')}\n`,
      stderr: '',
      truncated: false,
    });
  });

  it('refuses an executable that is not allowed, by resolved path', async () => {
    await tools({ shellAllowedCommands: ['echo'] });
    expect((await failure(call('shell', { argv: ['cat', '/etc/passwd'] }))).operation).to.equal(
      'allowlist',
    );
    expect((await failure(call('shell', { argv: ['sh', '-c', 'echo hi'] }))).operation).to.equal(
      'allowlist',
    );
    await tools({ shellAllowedCommands: [] });
    expect((await failure(call('shell', { argv: ['echo', 'x'] }))).operation).to.equal('allowlist');
  });

  it('runs in a contained cwd with a minimal environment and no keys', async () => {
    await tools({ shellAllowedCommands: ['env', 'pwd'], childEnv: { PATH: '/usr/bin:/bin' } });
    await mkdir(join(base, 'sub'));
    const env = (await call('shell', { argv: ['env'] })) as { stdout: string };
    expect(env.stdout).to.equal('PATH=/usr/bin:/bin\n');
    const pwd = (await call('shell', { argv: ['pwd'], cwd: 'sub' })) as { stdout: string };
    expect(pwd.stdout.trim().endsWith(join('base', 'sub'))).to.equal(true);
    expect((await failure(call('shell', { argv: ['pwd'], cwd: '..' }))).operation).to.equal('cwd');
  });

  it('times out and caps output', async () => {
    await tools({ shellAllowedCommands: ['sleep', 'yes', 'head'], timeoutMs: 200, maxBytes: 10 });
    expect((await failure(call('shell', { argv: ['sleep', '5'] }))).operation).to.equal('timeout');
    const out = (await call('shell', { argv: ['head', '-c', '100', '/dev/zero'] })) as Record<
      string,
      unknown
    >;
    expect(out.truncated).to.equal(true);
    expect((out.stdout as string).length).to.equal(10);
  });
});

describe('tools: http', () => {
  const lookupTo =
    (address: string, family = 4) =>
    (
      _host: string,
      done: (error: Error | null, addresses: { address: string; family: number }[]) => void,
    ) =>
      done(null, [{ address, family }]);

  it('fetches through a custom lookup when the block is off', async () => {
    const port = await listen((req, res) => res.end(`hello ${req.method}`));
    await tools({ lookup: lookupTo('127.0.0.1') });
    const result = (await call('http_get', { url: `http://internal.test:${port}/x` })) as Record<
      string,
      unknown
    >;
    expect(result.status).to.equal(200);
    expect(result.body).to.equal('hello GET');
    const posted = (await call('http_post', {
      url: `http://internal.test:${port}/`,
      body: 'b',
    })) as Record<string, unknown>;
    expect(posted.body).to.equal('hello POST');
  });

  it('blocks a hostname that resolves to 127.0.0.1, at connect time', async () => {
    let hits = 0;
    const port = await listen((_req, res) => {
      hits += 1;
      res.end('secret');
    });
    await tools({ blockPrivateIps: true, lookup: lookupTo('127.0.0.1') });
    const error = await failure(call('http_get', { url: `http://internal.test:${port}/` }));
    expect(error.operation).to.equal('blocked');
    expect(hits).to.equal(0);
  });

  it('blocks private literals in every spelling', async () => {
    const port = await listen((_req, res) => res.end('secret'));
    await tools({ blockPrivateIps: true });
    for (const host of [
      '127.0.0.1',
      '2130706433',
      '0177.0.0.1',
      '0x7f.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[fd00::1]',
      '[fe80::1]',
      '10.0.0.1',
      '169.254.169.254',
      '192.168.1.1',
      '172.16.0.1',
    ]) {
      const error = await failure(call('http_get', { url: `http://${host}:${port}/` }));
      expect(error.operation, host).to.equal('blocked');
    }
  });

  it('checks every redirect hop again', async () => {
    const targets: Record<string, string> = {
      '/a': 'http://[fd00::1]/',
      '/b': 'http://167772161/',
      '/c': 'http://private.test/',
      '/d': 'http://[::ffff:192.168.0.1]/',
      '/ok': '/final',
    };
    const port = await listen((req, res) => {
      if (req.url === '/final') return res.end('done');
      res.writeHead(302, { location: targets[req.url ?? ''] ?? '/' }).end();
    });
    // The first hop is the test server: 127.0.0.1 is exempted from the block for this test
    // only; every redirect target is private (decimal, IPv6 ULA, mapped, a resolved name).
    await tools({
      blockPrivateIps: true,
      isBlockedAddress: (address) => address !== '127.0.0.1' && isPrivateAddress(address),
      lookup: (host, done) =>
        done(null, [{ address: host === 'public.test' ? '127.0.0.1' : '10.1.2.3', family: 4 }]),
    });
    const ok = (await call('http_get', { url: `http://public.test:${port}/ok` })) as Record<
      string,
      unknown
    >;
    expect(ok.body).to.equal('done');
    for (const path of ['/a', '/b', '/c', '/d']) {
      const error = await failure(call('http_get', { url: `http://public.test:${port}${path}` }));
      expect(error.operation, path).to.equal('blocked');
    }
  });

  it('caps redirects and response size', async () => {
    const port = await listen((req, res) => {
      if (req.url === '/big') return res.end('x'.repeat(100));
      res.writeHead(302, { location: '/loop' }).end();
    });
    await tools({ lookup: lookupTo('127.0.0.1'), maxRedirects: 2, maxBytes: 50 });
    expect(
      (await failure(call('http_get', { url: `http://h.test:${port}/loop` }))).operation,
    ).to.equal('redirect');
    expect(
      (await failure(call('http_get', { url: `http://h.test:${port}/big` }))).operation,
    ).to.equal('response');
  });
});
