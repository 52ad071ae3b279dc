import { expect } from 'chai';
import { ESLint, type Linter } from 'eslint';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import tseslint from 'typescript-eslint';
import { packageRoot } from '../../../src/config/index.js';

interface EslintConfigModule {
  default: Linter.Config[];
  LAYERS: string[];
}

const LAYER_RULE = 'import-x/no-restricted-paths';
const MACHINES_RULE = '@typescript-eslint/no-restricted-imports';

/**
 * The repository's eslint.config.js cut down to its import rules: the same layer zones, resolver
 * and machines/ rule, without the type-checked rules (which need a TypeScript program and would
 * make each lint take tens of seconds).
 */
async function importRulesOnly(): Promise<{ eslint: ESLint; layers: string[] }> {
  const url = pathToFileURL(join(packageRoot, 'eslint.config.js')).href;
  const config = (await import(url)) as EslintConfigModule;
  const main = config.default.find((block) => block.rules?.[LAYER_RULE] !== undefined);
  const machines = config.default.find((block) => block.rules?.[MACHINES_RULE] !== undefined);
  if (main === undefined || machines === undefined) throw new Error('import rules not found');
  const eslint = new ESLint({
    cwd: packageRoot,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        // The directives name rules this cut-down config does not load.
        linterOptions: { reportUnusedDisableDirectives: 'off' },
        languageOptions: { parser: tseslint.parser },
        plugins: { ...main.plugins, '@typescript-eslint': tseslint.plugin },
        settings: main.settings ?? {},
        rules: { [LAYER_RULE]: main.rules![LAYER_RULE]! },
      },
      { files: machines.files!, rules: machines.rules! },
    ],
  });
  return { eslint, layers: config.LAYERS };
}

async function problems(eslint: ESLint, path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(packageRoot, path) });
  return result!.messages.map((message) => `${message.ruleId ?? 'parse'}: ${message.message}`);
}

describe('eslint import layers (eslint.config.js LAYERS)', function () {
  this.timeout(120_000);
  let eslint: ESLint;
  let layers: string[];

  before(async () => {
    ({ eslint, layers } = await importRulesOnly());
  });

  it('gives every folder and top-level file of src/ a layer', async () => {
    const entries = await readdir(join(packageRoot, 'src'), { withFileTypes: true });
    const found = entries
      .filter((entry) => entry.isDirectory() || entry.name.endsWith('.ts'))
      .map((entry) => `src/${entry.name}`);
    expect(found.filter((path) => !layers.includes(path))).to.deep.equal([]);
    expect(layers.filter((path) => path !== 'machines' && !found.includes(path))).to.deep.equal([]);
  });

  it('fails an import from a lower folder up to a higher one, type-only, re-export or dynamic', async () => {
    const code = [
      "import type { Runtime } from '../engine/types.js';",
      "export { createApp } from '../http/app.js';",
      "export const load = () => import('../eval/evaluator.js');",
      'export type Probe = Runtime;',
    ].join('\n');
    const found = await problems(eslint, 'src/store/upward-probe.ts', code);
    expect(found).to.have.length(3);
    for (const message of found) {
      expect(message).to.match(/^import-x\/no-restricted-paths: .*src\/store may import only/);
    }
  });

  it('fails an import of a top-level entry point (src/index.ts) from a folder', async () => {
    const found = await problems(
      eslint,
      'src/workflow/upward-probe.ts',
      "export { createRuntime } from '../index.js';",
    );
    expect(found).to.have.length(1);
  });

  it('lets a folder import itself and the layers below it', async () => {
    const code = [
      "import type { RunRecord } from '../store/run-record.js';",
      "import { ERROR_CODES } from '../errors.js';",
      "import type { EngineClock } from '../../machines/engine-contract.js';",
      "import { systemClock } from './system-clock.js';",
      'export type Probe = [RunRecord, EngineClock];',
      'export const probe = [ERROR_CODES, systemClock];',
    ].join('\n');
    expect(await problems(eslint, 'src/engine/downward-probe.ts', code)).to.deep.equal([]);
  });

  it('lets machines/ import src/ for types only', async () => {
    const typeOnly =
      "import type { CompiledStep } from '../src/workflow/types.js';\nexport type P = CompiledStep;";
    expect(await problems(eslint, 'machines/probe.ts', typeOnly)).to.deep.equal([]);
    const value = "export { compileWorkflow } from '../src/workflow/compile.js';";
    const found = await problems(eslint, 'machines/probe.ts', value);
    expect(found).to.have.length(1);
    expect(found[0]).to.match(/^@typescript-eslint\/no-restricted-imports: .*types only/);
  });
});
