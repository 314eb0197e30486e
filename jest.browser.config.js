/** Browser tests (`npm run test:browser`): Debian's Chromium driven by playwright-core. */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 60000,
  // One Chromium at a time: two would share two cores with the servers they drive.
  maxWorkers: 1,
};
