// ESLint flat config: type-checked TypeScript rules plus import layers (see STYLE.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

/**
 * The layers of the code, lowest first: a folder of src/ (or one of its top-level files) may
 * import only from itself and from the layers listed before it, so an import that climbs back
 * up (the kind that makes folders import each other in a circle, which `import-x/no-cycle`
 * misses because it follows files) fails lint. A type or function a lower layer needs lives in
 * that lower layer (STYLE.md, "Who may import whom"). Every folder and top-level file of src/
 * must be listed (test/unit/lint/layers.test.ts checks it and that an upward import fails).
 */
export const LAYERS = [
  // Leaves: generated schema types, the error catalogue, logging, configuration, file primitives.
  'src/generated',
  'src/errors.ts',
  'src/log.ts',
  'src/config',
  'src/files',
  // Domain folders, each above those it uses.
  'src/security',
  'src/llm',
  'src/memory',
  'src/tools',
  'src/workflow',
  'src/agents',
  'machines', // the XState side: pure logic, importing src/ as types only (rule below)
  'src/store',
  'src/events',
  'src/tracing',
  // The engine wires machines to the domain; what observes or drives it sits above it.
  'src/engine',
  'src/eval',
  'src/metrics',
  'src/service', // the composition root: what the service, a worker and a command are built of
  'src/scale',
  'src/http', // nothing below imports http
  'src/cli',
  // Entry points: the embedding API, the service, the command line; nothing imports them.
  'src/index.ts',
  'src/main.ts',
  'src/cli.ts',
];

/** One `import-x/no-restricted-paths` zone per layer: it may not import any layer after it. */
function layerZones(layers) {
  return layers.slice(0, -1).map((layer, index) => ({
    target: `./${layer}`,
    from: layers.slice(index + 1).map((above) => `./${above}`),
    message: `${layer} may import only the layers before it (LAYERS in eslint.config.js): move what it needs down a layer, or invert the dependency.`,
  }));
}

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'src/generated/**', 'runs/**', '*.cjs', 'frontend/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    // The legacy fallback resolver mis-loads packages that ship a `node/` folder (lru-cache 11).
    // Sources import each other as `.js` (NodeNext): without the alias to `.ts` no relative import
    // resolved, and import-x/no-cycle and the zones below silently checked nothing.
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-empty': ['error', { allowEmptyCatch: false }],
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': [
        'error',
        { basePath: import.meta.dirname, zones: layerZones(LAYERS) },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only src/config reads process.env' },
      ],
      'no-console': 'error',
      'no-eval': 'error',
      'no-new-func': 'error',
    },
  },
  {
    // machines/ is pure XState logic: from src/ it takes types, and one pure function, the token
    // arithmetic `addUsage` of src/llm/types.ts (machines/scheduler adds up attempts' usage).
    files: ['machines/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)src/(?!llm/types\\.js$)',
              allowTypeImports: true,
              message: 'machines/ imports xstate and types only',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/config/**', 'src/main.ts', 'src/cli.ts', 'test/**', 'scripts/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['test/**', 'scripts/**'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
