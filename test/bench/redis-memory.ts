/**
 * Measures Redis memory per stored record after real flows (`npm run bench:redis-memory`).
 * Runs N complete code flows against an app on the shared Redis (own key prefix), then reads
 * `MEMORY USAGE` of every key and reports the average per model, and per completed flow.
 */
import { Redis } from 'ioredis';

import { confidentialClient, startApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';

const flows = Number(process.argv[2] ?? 100);
const prefix = testPrefix('memory');
const client = confidentialClient();
const running = await startApp({ clients: [client], properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix } });
const redis = new Redis(SHARED_REDIS_URL);
try {
  for (let i = 0; i < flows; i += 1) await runCodeFlow(running.issuer, client);
  // A registered client as the registration endpoint stores it (metadata of a typical encrypting RP).
  await running.app.svc.store.adapter('Client').upsert('bench-client-id-0123456789', {
    client_id: 'bench-client-id-0123456789',
    client_id_issued_at: Math.floor(Date.now() / 1000),
    client_name: 'Example relying party',
    redirect_uris: ['https://rp.example.com/callback'],
    token_endpoint_auth_method: 'private_key_jwt',
    id_token_encrypted_response_alg: 'RSA-OAEP-256',
    id_token_encrypted_response_enc: 'A128CBC-HS256',
    userinfo_signed_response_alg: 'RS256',
    userinfo_encrypted_response_alg: 'RSA-OAEP-256',
    userinfo_encrypted_response_enc: 'A128CBC-HS256',
    jwks: { keys: [{ kty: 'RSA', use: 'enc', kid: 'k1', e: 'AQAB', n: 'x'.repeat(342) }] },
  });
  const perModel = new Map<string, { count: number; bytes: number }>();
  for (const key of await redis.keys(`${prefix}*`)) {
    const model = key.slice(prefix.length).split(':')[0] as string;
    const bytes = Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    const entry = perModel.get(model) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += bytes;
    perModel.set(model, entry);
  }
  const rows = [...perModel].sort(([a], [b]) => a.localeCompare(b));
  process.stdout.write(`Redis ${(await redis.info('server')).match(/redis_version:(\S+)/)?.[1]}, ${flows} flows\n\n`);
  process.stdout.write('| Key kind | Keys | Bytes per key (avg) |\n|---|---|---|\n');
  for (const [model, { count, bytes }] of rows) process.stdout.write(`| ${model} | ${count} | ${Math.round(bytes / count)} |\n`);
  const total = rows.filter(([m]) => m !== 'Client').reduce((sum, [, e]) => sum + e.bytes, 0);
  process.stdout.write(`\nPer completed flow (all keys but Client): ${Math.round(total / flows)} bytes\n`);
} finally {
  await running.close();
  await deletePrefix(SHARED_REDIS_URL, prefix);
  redis.disconnect();
}
