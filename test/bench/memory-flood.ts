/**
 * What anonymous requests store in the embedded memory store, and what each record costs
 * (`node --expose-gc node_modules/.bin/tsx test/bench/memory-flood.ts [requests]`): sends each kind of request a
 * stranger can send, counting the records written per model with their JSON length, then the heap one record and
 * one throttle counter hold in the store alone.
 */
import type { ClientMetadata } from 'oidc-provider';

import { decorateAdapter, type SvcStore } from '../../adapters/store.js';
import { createMemoryStore } from '../../adapters/memory.js';
import { confidentialClient, startApp } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, loginAttempts, runCodeFlow } from '../helpers/flow.js';

const n = Number(process.argv[2] ?? 200);
const writes = new Map<string, { count: number; bytes: number }>();
const inner = createMemoryStore();
const note = (model: string, payload: unknown): void => {
  const entry = writes.get(model) ?? { count: 0, bytes: 0 };
  entry.count += 1;
  entry.bytes += JSON.stringify(payload).length;
  writes.set(model, entry);
};
const attemptKeys = new Set<string>();
const store: SvcStore = {
  ...inner,
  adapter: (model) => {
    const a = inner.adapter(model);
    return decorateAdapter(a, { upsert: async (id, payload, expiresIn) => { note(model, payload); return a.upsert(id, payload, expiresIn); } });
  },
  insert: async (model, id, payload, expiresIn) => { note(model, payload); return inner.insert(model, id, payload, expiresIn); },
  attempts: { ...inner.attempts, fail: async (key, rule) => { attemptKeys.add(key); return inner.attempts.fail(key, rule); }, check: (k, r) => inner.attempts.check(k, r), forget: (k, o) => inner.attempts.forget(k, o) },
};
const confidential = confidentialClient();
const pub: ClientMetadata = { client_id: 'public-rp', token_endpoint_auth_method: 'none', redirect_uris: ['http://rp.localhost/cb'] };
const running = await startApp({ store, clients: [confidential, pub], properties: { 'svc.proxy': true, 'svc.demo.enabled': true } });
const report = (what: string): void => {
  process.stdout.write(`\n## ${what}\n`);
  for (const [model, { count, bytes }] of writes) process.stdout.write(`- ${model}: ${count} writes, ${Math.round(bytes / count)} bytes JSON each\n`);
  if (attemptKeys.size) process.stdout.write(`- attempt counters: ${attemptKeys.size} keys\n`);
  writes.clear();
  attemptKeys.clear();
};
/** Heap in use after a full collection (run with `node --expose-gc`, else without one). */
const heap = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
};
try {
  for (let i = 0; i < n; i += 1) await fetch(codeFlowUrl(running.issuer, pub), { redirect: 'manual' });
  writes.clear();
  for (let i = 0; i < n; i += 1) await fetch(codeFlowUrl(running.issuer, pub, { state: 'x' }), { redirect: 'manual' });
  report('GET /authorize, public client');
  for (let i = 0; i < n; i += 1) await fetch(codeFlowUrl(running.issuer, pub, { state: 'x'.repeat(6000) }), { redirect: 'manual' });
  report('GET /authorize with a 6000-char state');
  for (let i = 0; i < n; i += 1) {
    const r = await fetch(`${running.issuer}/par`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...Object.fromEntries(new URL(codeFlowUrl(running.issuer, pub)).searchParams) }).toString() });
    if (i === 0) process.stdout.write(`\nPAR status ${r.status} ${await r.text()}\n`);
  }
  report('POST /par, public client');
  const login = await loginAttempts(running, confidential, new FormBrowser());
  writes.clear();
  for (let i = 0; i < n; i += 1) await login.attempt(`random-${i}`, 'wrong', `203.0.113.${i % 250}`);
  report('POST login with a random name, wrong password, 250 addresses');
  for (let i = 0; i < n; i += 1) await fetch(`${running.issuer}/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['https://a.example/cb'] }) });
  report('POST /reg without a token');
  for (let i = 0; i < n; i += 1) await fetch(`${running.issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code', code: `c${i}`, client_id: 'public-rp', redirect_uri: 'http://rp.localhost/cb', code_verifier: 'v'.repeat(43) }).toString() });
  report('POST /token with a made-up code');
  for (let i = 0; i < n; i += 1) await fetch(`${running.baseUrl}/oidcdemo/login`, { redirect: 'manual' });
  report('GET /oidcdemo/login');
  for (let i = 0; i < 20; i += 1) await runCodeFlow(running.issuer, confidential, { skipUserinfo: true });
  report('20 completed code flows');
  // Heap per record, the store alone (no HTTP garbage in between): an interaction as /authorize writes it, and a counter.
  const bare = createMemoryStore();
  const sample = { kind: 'Interaction', params: { client_id: 'public-rp', state: 'x'.repeat(400) }, exp: 1, iat: 1, returnTo: 'http://127.0.0.1/x'.repeat(4) };
  const records = 20_000;
  let before = heap();
  for (let i = 0; i < records; i += 1) await bare.adapter('Interaction').upsert(`interaction-${i}-${'u'.repeat(10)}`, sample, 3600);
  process.stdout.write(`\nheap per stored Interaction of ${JSON.stringify(sample).length} bytes JSON: ${Math.round((heap() - before) / records)} bytes\n`);
  before = heap();
  for (let i = 0; i < records; i += 1) await bare.attempts.fail(`login-name:${'k'.repeat(43)}${i}`, { limit: 5, windowSeconds: 900, coolDownSeconds: 900, maxCoolDownSeconds: 3600, consecutiveLimit: 100 });
  process.stdout.write(`heap per attempt counter (key of ~54 chars): ${Math.round((heap() - before) / records)} bytes\n`);
  await bare.close();
} finally {
  await running.close();
}
