/**
 * Jest in native ESM mode with ts-jest (see docs/development.md): transpiled file by file
 * (`tsconfig.jest.json` sets `isolatedModules`; `npm run typecheck` checks the types), on two workers.
 */
export default {
  testEnvironment: '<rootDir>/test/node-environment.js',
  globalSetup: '<rootDir>/test/redis-global-setup.js',
  globalTeardown: '<rootDir>/test/redis-global-teardown.js',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.jest.json', diagnostics: { ignoreCodes: [151002] } }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/bench/', '<rootDir>/test/browser/', '<rootDir>/test/pack/', '<rootDir>/test/brokers/', '\\.long\\.test\\.ts$'],
  testTimeout: 30000,
  maxWorkers: 2,
};
