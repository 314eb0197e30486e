/**
 * The packaging tier (`npm run test:pack`): the packed tarball and git installs in fresh projects, the production
 * process's signals, and `svc-connect serve` as its own process; `dist/` is built once by its global setup.
 */
import base from './jest.config.js';

export default {
  ...base,
  globalSetup: '<rootDir>/test/pack-global-setup.js',
  testMatch: ['<rootDir>/test/pack/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300000,
  // Side by side with the browser and broker tiers in .ci/run: two installs at a time.
  maxWorkers: 2,
};
