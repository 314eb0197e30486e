/**
 * Jest in native ESM mode (see docs/development.md): each file's types stripped by esbuild
 * (`test/esbuild-transform.js`; `npm run typecheck` checks the types), on four workers: files that wait on processes, Redis and sockets leave the two cores idle on two.
 */
export default {
  testEnvironment: '<rootDir>/test/node-environment.js',
  globalSetup: '<rootDir>/test/redis-global-setup.js',
  globalTeardown: '<rootDir>/test/redis-global-teardown.js',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': '<rootDir>/test/esbuild-transform.js',
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/bench/', '<rootDir>/test/browser/', '<rootDir>/test/pack/', '<rootDir>/test/brokers/', '\\.long\\.test\\.ts$'],
  testSequencer: '<rootDir>/test/slow-first-sequencer.js',
  testTimeout: 30000,
  maxWorkers: 4,
};
