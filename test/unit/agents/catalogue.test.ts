import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, ERROR_CODES } from '../../../src/errors.js';
import {
  createAgentCatalogueLoader,
  findAgent,
  loadAgentCatalogue,
  type AgentCatalogueCache,
} from '../../../src/agents/catalogue.js';
import {
  AGENT_NAME_PATTERN,
  TIER0_AGENTS,
  agentNameProblem,
  parseAgentName,
} from '../../../src/workflow/agent-names.js';
import workflowSchema from '../../../schemas/workflow.schema.json' with { type: 'json' };
import { createWorkflowRegistry } from '../../../src/workflow/registry.js';
import { rejection } from '../../support/rejection.js';

const SHIPPED = join(import.meta.dirname, '..', '..', '..', 'agents', 'catalogue.yaml');

describe('loadAgentCatalogue', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'catalogue-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('with a cache, parses a file again only once it changed', async () => {
    const file = join(dir, 'agents.yaml');
    const entry = (name: string): string =>
      `agents:\n  helper:\n    name: ${name}\n    description: Helps.\n    tier: 1\n    persona: You help.\n`;
    await writeFile(file, entry('First'));
    const cache: AgentCatalogueCache = new Map();
    const first = await loadAgentCatalogue({ files: [file], cache });
    const again = await loadAgentCatalogue({ files: [file], cache });
    expect(again[0]).to.equal(first[0]);
    await writeFile(file, entry('Second one'));
    const changed = await loadAgentCatalogue({ files: [file], cache });
    expect(changed[0]?.name).to.equal('Second one');
    await rm(file);
    const error = await loadAgentCatalogue({ files: [file], cache }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(AppError);
    expect(cache.has(file)).to.equal(false);
  });

  it('a loader shares the load in flight among concurrent calls, and loads again after it', async () => {
    const file = join(dir, 'agents.yaml');
    const entry = (name: string): string =>
      `agents:\n  helper:\n    name: ${name}\n    description: Helps.\n    tier: 1\n    persona: You help.\n`;
    await writeFile(file, entry('First'));
    const load = createAgentCatalogueLoader({ files: [file] });
    // A burst: every call made before the first load settles gets that load's result.
    const burst = await Promise.all(Array.from({ length: 20 }, () => load()));
    for (const agents of burst) expect(agents).to.equal(burst[0]);
    expect(burst[0]?.[0]?.name).to.equal('First');
    // A later call looks the file up again (a new list), reusing the parsed entries.
    const later = await load();
    expect(later).to.not.equal(burst[0]);
    expect(later[0]).to.equal(burst[0]?.[0]);
    await writeFile(file, entry('Second one'));
    expect((await load())[0]?.name).to.equal('Second one');
    // A failed load is shared too, and the next call tries again.
    await rm(file);
    const failures = await Promise.all([load(), load()].map((p) => rejection(p, AppError)));
    expect(failures[1]).to.equal(failures[0]);
    await writeFile(file, entry('Back'));
    expect((await load())[0]?.name).to.equal('Back');
  });

  it('loads the shipped catalogue with every documented role', async () => {
    const agents = await loadAgentCatalogue({ files: [SHIPPED] });
    expect(agents.map((a) => a.role)).to.include.members([
      'reviewer',
      'security_auditor',
      'summarizer',
      'planner',
      'coder',
      'tester',
      'analyst',
      'researcher',
      'writer',
    ]);
    for (const agent of agents) {
      expect(agent.name, agent.role).to.be.a('string').and.not.equal('');
      expect(agent.description, agent.role).to.be.a('string').and.not.equal('');
      expect(agent.persona, agent.role).to.be.a('string').and.not.equal('');
      expect(agent.tier, agent.role).to.be.within(1, 5);
    }
    expect(findAgent(agents, 'reviewer')).to.deep.include({ name: 'Code Reviewer', tier: 2 });
  });

  it('covers every LLM role used by the shipped workflows', async () => {
    const agents = await loadAgentCatalogue({ files: [SHIPPED] });
    const registry = createWorkflowRegistry({ dir: join(SHIPPED, '..', '..', 'workflows') });
    for (const name of await registry.list()) {
      for (const step of (await registry.get(name)).compiled.steps) {
        const parsed = parseAgentName(step.agent);
        if (parsed === undefined || parsed.tier === 0) continue;
        expect(findAgent(agents, parsed.role), `${name}: ${step.agent}`).to.not.equal(undefined);
      }
    }
  });

  it('adds and overrides roles from an extra directory, re-reading on every call', async () => {
    const extra = join(dir, 'extra');
    await mkdir(extra);
    await writeFile(
      join(extra, 'b.yaml'),
      'agents:\n  poet:\n    name: Poet\n    description: Writes verse.\n    tier: 4\n    persona: You write verse.\n',
    );
    const before = await loadAgentCatalogue({ files: [SHIPPED], dirs: [extra] });
    expect(findAgent(before, 'poet')).to.deep.equal({
      role: 'poet',
      name: 'Poet',
      description: 'Writes verse.',
      tier: 4,
      persona: 'You write verse.',
    });
    await writeFile(
      join(extra, 'a.yml'),
      'agents:\n  reviewer:\n    name: Strict Reviewer\n    description: Strict.\n    tier: 5\n    persona: Be strict.\n',
    );
    const after = await loadAgentCatalogue({ files: [SHIPPED], dirs: [extra] });
    expect(findAgent(after, 'reviewer')).to.deep.include({ name: 'Strict Reviewer', tier: 5 });
    expect(after.filter((a) => a.role === 'reviewer')).to.have.length(1);
  });

  it('names the file of a catalogue that does not match the format', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'agents:\n  Bad Role:\n    name: X\n    tier: 9\n    colour: red\n');
    const error = await rejection(loadAgentCatalogue({ files: [bad] }), AppError);
    expect(error.code).to.equal(ERROR_CODES.CONFIG);
    expect(error.message).to.contain(bad);
    expect(error.details?.map((d) => d.loc)).to.deep.include.members([['agents', 'Bad Role']]);
  });

  it('names the file of a catalogue that is not YAML, or is missing', async () => {
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'agents: [');
    expect((await rejection(loadAgentCatalogue({ files: [broken] }), AppError)).message).to.contain(
      broken,
    );
    const missing = join(dir, 'missing.yaml');
    expect(
      (await rejection(loadAgentCatalogue({ files: [missing] }), AppError)).message,
    ).to.contain(missing);
    expect(
      (await rejection(loadAgentCatalogue({ dirs: [join(dir, 'nodir')] }), AppError)).message,
    ).to.contain('nodir');
  });

  it('reads catalogues within the YAML bounds: custom tags, deep nesting and alias bombs are refused', async () => {
    const cases: [string, string][] = [
      ['tagged.yaml', 'agents:\n  x: !!python/object:os.system {}\n'],
      ['deep.yaml', `agents: ${'['.repeat(300_000)}`],
      [
        'bomb.yaml',
        `a: &a "${'x'.repeat(3000)}"\nagents: {b: [${Array(10).fill('*a').join(',')}]}\n`,
      ],
    ];
    const limits = { maxYamlBytes: 1 << 20, maxExpandedYamlBytes: 8192 };
    const messages: string[] = [];
    for (const [name, text] of cases) {
      await writeFile(join(dir, name), text);
      messages.push(
        (await rejection(loadAgentCatalogue({ files: [join(dir, name)], limits }), AppError))
          .message,
      );
    }
    expect(messages[0]).to.match(
      /tagged\.yaml: invalid YAML \(line 2, column 6\): unsupported tag/,
    );
    expect(messages[1]).to.contain('nested more than 100 levels deep');
    expect(messages[2]).to.contain('more than 8192 bytes once its aliases are expanded');
  });
});

describe('agent names', () => {
  it('parses tierN_role', () => {
    expect(parseAgentName('tier2_security_auditor')).to.deep.equal({
      tier: 2,
      role: 'security_auditor',
    });
    expect(parseAgentName('tier0_echo')).to.deep.equal({ tier: 0, role: 'echo' });
    for (const bad of ['tier6_x', 'tier2_', 'tier2_Reviewer', 'reviewer', 'tier_2_x', 'tier2-x']) {
      expect(parseAgentName(bad), bad).to.equal(undefined);
    }
  });

  it('uses the same pattern as the workflow schema', () => {
    expect(workflowSchema.$defs.step.properties.agent.pattern).to.equal(AGENT_NAME_PATTERN);
  });

  it('accepts exactly the documented tier-0 agents', () => {
    expect(TIER0_AGENTS).to.deep.equal([
      'tier0_echo',
      'tier0_fail',
      'tier0_sleep',
      'tier0_process',
      'tier0_counter',
      'tier0_parser',
      'tier0_tool',
    ]);
    for (const agent of TIER0_AGENTS) expect(agentNameProblem(agent)).to.equal(undefined);
    expect(agentNameProblem('tier0_reviewer')).to.match(/unknown tier-0 agent/);
  });
});
