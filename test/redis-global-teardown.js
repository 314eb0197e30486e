/** Jest `globalTeardown`: see test/redis-setup.js. */
export { teardown as default } from './redis-setup.js';
