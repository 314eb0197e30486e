import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { generateProviderKeys, type PrivateJwks } from '../../lib/provider/keys.js';

let shared: Promise<PrivateJwks> | undefined;

/**
 * One provider key set for the whole test run: the first worker to need it generates it into the run's own
 * folder (`SVC_TEST_RUN_DIR`, made and removed by Jest's global setup and teardown) and every later app of
 * the run reads it from there; outside such a run, one set per process. Two RSA 2048 keys cost a few hundred
 * CPU milliseconds, which test apps used to pay at every start. Tests of key generation itself start without it.
 */
export function testProviderKeys(): Promise<PrivateJwks> {
  shared ??= (async () => {
    const dir = process.env.SVC_TEST_RUN_DIR;
    const file = dir ? join(dir, 'provider-keys.json') : undefined;
    if (file && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as PrivateJwks;
    const jwks = await generateProviderKeys();
    if (file) {
      // Workers that race here each write a whole set and the last rename wins: every reader sees one whole set.
      writeFileSync(`${file}.${process.pid}`, JSON.stringify(jwks), { mode: 0o600 });
      renameSync(`${file}.${process.pid}`, file);
    }
    return jwks;
  })();
  return shared;
}
