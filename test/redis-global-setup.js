/** Jest `globalSetup`: see test/redis-setup.js. */
export { setup as default } from './redis-setup.js';
