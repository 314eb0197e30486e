/** The broker tier (`npm run test:brokers`): a real IAM product, installed from Debian, in front of svc-connect. */
import base from './jest.config.js';

export default {
  ...base,
  globalSetup: '<rootDir>/test/brokers-global-setup.js',
  testMatch: ['<rootDir>/test/brokers/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 120000,
};
