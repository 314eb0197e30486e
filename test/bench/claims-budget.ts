/**
 * What a `claims` parameter costs the server (issue 14), printed, not asserted:
 * `npx tsx test/bench/claims-budget.ts [requests]` (default 200 per case).
 *
 * 1. The claims check alone (`rewriteClaimsParameter`: budget, validation, stored form), in-process,
 *    per call: the server-side work a request makes.
 * 2. Whole authorization requests against an app on the shared Redis (own key prefix), per request
 *    on loopback (median and p95 of the round trip, client included).
 * 3. The largest stored records of the largest accepted requests through a complete flow (login,
 *    consent, code redeemed), in payload bytes and Redis `MEMORY USAGE`.
 */
import type { Client } from 'oidc-provider';
import { Redis } from 'ioredis';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { ClaimRegistry, type ClaimModule } from '../../lib/index.js';
import { rewriteClaimsParameter } from '../../lib/claims/authorization.js';
import { ClaimValueMac } from '../../lib/claims/value-mac.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, FormBrowser, pkcePair, redeemCode, redirectParams } from '../helpers/flow.js';
import { bracketFlood, bytesOf, everySvcName, namesAcrossChannels, valuedFlood, vocabularyFlood, type ClaimsObject } from '../helpers/claims-requests.js';
import { registerClient, type RegisteredClient } from '../helpers/clients.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';

const N = Number(process.argv[2] ?? 200);
const out = (line = ''): boolean => process.stdout.write(`${line}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] as number;
const ms = (x: number): string => x.toFixed(3);

const LONG_ATTACK = 'verification-procedure-variant-with-a-long-descriptive-segment-name-and-more-';
const cases: { name: string; claims: () => ClaimsObject; wide?: boolean }[] = [
  { name: 'no claims parameter', claims: () => ({}) },
  { name: 'attack, 14.8 KB (96 names × 129): refused on size', claims: () => ({ userinfo: bracketFlood(96, LONG_ATTACK) }) },
  { name: 'attack under 8 KiB (96 names × 129): refused by count', claims: () => ({ userinfo: bracketFlood(96) }) },
  { name: 'accepted: 256 names over both channels', claims: () => namesAcrossChannels(256) },
  { name: 'accepted: 8 KiB of short names asking for values', claims: () => valuedFlood() },
  { name: 'accepted, every svc name deliverable: 192 marked names + 8 KiB', claims: () => vocabularyFlood(), wide: true },
];

const registries = { demo: new ClaimRegistry(createDemoClaimModules()), wide: new ClaimRegistry([...createDemoClaimModules(), everySvcName]) };
const modules = (wide?: boolean): ClaimModule[] => (wide ? [...createDemoClaimModules(), everySvcName] : createDemoClaimModules());
const mac = new ClaimValueMac(['bench-cookie-key']);
const encrypting = { clientId: 'unit-rp', idTokenEncryptedResponseAlg: 'RSA-OAEP-256', userinfoEncryptedResponseAlg: 'RSA-OAEP-256' } as unknown as Client;

out(`## The claims check alone (in-process, ${N * 10} calls each)\n`);
out('| Case | Bytes | ms per call (median) | p95 | Result |\n|---|---|---|---|---|');
for (const c of cases) {
  const claims = c.claims();
  if (!claims.userinfo && !claims.id_token) continue;
  const text = JSON.stringify(claims);
  const times: number[] = [];
  let result = 'accepted';
  for (let i = 0; i < N * 10; i += 1) {
    const start = performance.now();
    try {
      rewriteClaimsParameter(text, claims, encrypting, c.wide ? registries.wide : registries.demo, mac);
    } catch (err) {
      result = (err as { error_description?: string }).error_description ?? String(err);
    }
    times.push(performance.now() - start);
  }
  out(`| ${c.name} | ${bytesOf(claims)} | ${ms(median(times))} | ${ms(p95(times))} | ${result} |`);
}

async function withApp<T>(wide: boolean | undefined, body: (running: RunningApp, rp: RegisteredClient, prefix: string) => Promise<T>): Promise<T> {
  const prefix = testPrefix('bench-claims');
  const running = await startApp({ claimModules: modules(wide), properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix } });
  try {
    return await body(running, await registerClient(running, 'rsa'), prefix);
  } finally {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  }
}

const params = (rp: RegisteredClient, claims: ClaimsObject, challenge = pkcePair().challenge): Record<string, string> => ({
  client_id: rp.metadata.client_id,
  response_type: 'code',
  redirect_uri: 'https://rp.example/cb',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  state: 'bench',
  scope: 'openid',
  ...(claims.userinfo || claims.id_token ? { claims: JSON.stringify(claims) } : {}),
});

out(`\n## Authorization requests on Redis (form POST, ${N} each, loopback round trip)\n`);
out('| Case | ms per request (median) | p95 | Answer |\n|---|---|---|---|');
for (const c of cases) {
  await withApp(c.wide, async (running, rp) => {
    const body = new URLSearchParams(params(rp, c.claims())).toString();
    const send = () =>
      fetch(`${running.issuer}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    for (let i = 0; i < 20; i += 1) await send();
    const times: number[] = [];
    let answer = '';
    for (let i = 0; i < N; i += 1) {
      const start = performance.now();
      const response = await send();
      times.push(performance.now() - start);
      const location = response.headers.get('location') ?? '';
      answer = location.startsWith('/') ? 'interaction' : (redirectParams(location).get('error') ?? location);
    }
    out(`| ${c.name} | ${ms(median(times))} | ${ms(p95(times))} | ${answer} |`);
  });
}

/** Payload bytes and MEMORY USAGE of the largest record of each model under `prefix`. */
async function records(redis: Redis, prefix: string, into: Map<string, { bytes: number; memory: number }>): Promise<void> {
  for (const key of await redis.keys(`${prefix}*`)) {
    if ((await redis.type(key)) !== 'hash') continue;
    const model = key.slice(prefix.length).split(':')[0] as string;
    const fields = await redis.hgetall(key);
    const bytes = Object.entries(fields).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    const memory = Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    const seen = into.get(model) ?? { bytes: 0, memory: 0 };
    into.set(model, { bytes: Math.max(seen.bytes, bytes), memory: Math.max(seen.memory, memory) });
  }
}

out('\n## Largest records of a complete flow on Redis (payload bytes / MEMORY USAGE)\n');
out('| Case | Interaction | AuthorizationCode | AccessToken | Grant |\n|---|---|---|---|---|');
const redis = new Redis(SHARED_REDIS_URL);
for (const c of cases.filter((x) => x.name.startsWith('accepted'))) {
  await withApp(c.wide, async (running, rp, prefix) => {
    const largest = new Map<string, { bytes: number; memory: number }>();
    const { verifier, challenge } = pkcePair();
    const browser = new FormBrowser();
    let step = await browser.follow(authorizationUrl(running.issuer, params(rp, c.claims(), challenge)), running.baseUrl);
    await records(redis, prefix, largest);
    step = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    await records(redis, prefix, largest);
    if (!step.leftTo) step = await browser.submit('consent-allow', {}, running.baseUrl);
    await records(redis, prefix, largest);
    await redeemCode(running.issuer, rp.metadata, redirectParams(step.leftTo as string).get('code') as string, verifier);
    await records(redis, prefix, largest);
    const cell = (model: string): string => {
      const r = largest.get(model);
      return r ? `${r.bytes} / ${r.memory}` : '—';
    };
    out(`| ${c.name} | ${cell('Interaction')} | ${cell('AuthorizationCode')} | ${cell('AccessToken')} | ${cell('Grant')} |`);
  });
}
redis.disconnect();
