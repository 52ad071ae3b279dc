// Mocha runs the TypeScript suites through tsx; benchmarks (test/bench) are not part of the suite.
module.exports = {
  spec: [
    'test/unit/**/*.test.ts',
    'test/machines/**/*.test.ts',
    'test/http/**/*.test.ts',
    'test/e2e/**/*.test.ts',
    'test/conformance/**/*.test.ts',
    'test/redis/**/*.test.ts',
    'test/scale/**/*.test.ts',
  ],
  'node-option': ['import=tsx'],
  extension: ['ts'],
  timeout: 20000,
  reporter: 'spec',
  forbidOnly: Boolean(process.env.CI),
};
