/**
 * Jest global setup of the broker tier: installs LemonLDAP::NG from Debian when it is missing
 * (test/brokers/install.sh), then starts the run's own redis-server (test/redis-setup.js).
 */
/* global URL */
import { execFileSync } from 'node:child_process';

import { setup as redisSetup } from './redis-setup.js';

export default async function setup() {
  execFileSync('bash', [new URL('./brokers/install.sh', import.meta.url).pathname], { stdio: ['ignore', 'inherit', 'inherit'] });
  await redisSetup();
}
