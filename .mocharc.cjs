// Mocha runs the TypeScript suites through tsx. The suite's globs are in package.json's `mocha`
// script (not here, where mocha would add them to any file named on the command line, so
// `npx mocha test/x.test.ts` runs that file alone); benchmarks (test/bench) are not in them.
module.exports = {
  'node-option': ['import=tsx'],
  extension: ['ts'],
  timeout: 20000,
  reporter: 'spec',
  forbidOnly: Boolean(process.env.CI),
};
