/** The packaging tier (`npm run test:pack`): the packed tarball and git installs in fresh projects, and the production process's signals. */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/pack/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300000,
};
