/** The longer reliability suites (`npm run test:reliability`): store faults under load. */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/reliability/**/*.long.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 120000,
};
