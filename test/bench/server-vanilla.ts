/**
 * Bench baseline: vanilla oidc-provider 9 as a user would set it up from its documentation, with
 * the same keys, encryption settings and statically registered client as ours, PKCE, and
 * contract-shaped login and consent pages (the same HTML as ours, served by a small @koa/router on
 * `provider.use`, as oidc-provider's Koa example does). Its store is, by `spec.adapter`:
 * - `builtin`: what a user picks — oidc-provider's own memory adapter on the embedded store, the
 *   plain Redis adapter of its published example on Redis (`plain-redis-adapter.ts`);
 * - `ours`: svc-connect's adapter (the comparison of the earlier benchmark, kept as a second line).
 * Its account model returns the same claim values as the demo account and puts scope claims in the
 * ID token too (`conformIdTokenClaims: false`), so both servers sign and encrypt the same payloads.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { Redis } from 'ioredis';
import Provider, { type Adapter } from 'oidc-provider';

import { createMemoryStore } from '../../adapters/memory.js';
import { createRedisStore } from '../../adapters/redis.js';
import { DEMO_PEOPLE } from '../../lib/demo/claim-modules.js';
import { sendPage } from '../../lib/pages/html.js';
import { consentPage, loginPage } from '../../lib/pages/interaction-pages.js';
import { benchClient, type ServerSpec } from './common.js';
import { plainRedisAdapter } from './plain-redis-adapter.js';
import { countRoundTrips, serveStats, type RoundTrips } from './round-trips.js';

const person = DEMO_PEOPLE['demo-0001'];
const spec = JSON.parse(process.env.BENCH_SERVER ?? '{}') as ServerSpec;
const counters: RoundTrips = { roundTrips: 0, commands: 0 };
serveStats(counters);

let adapter: ((model: string) => Adapter) | undefined;
let close = async (): Promise<void> => undefined;
if (spec.adapter === 'ours') {
  const store = spec.redisUrl ? createRedisStore({ url: spec.redisUrl, keyPrefix: spec.keyPrefix }) : createMemoryStore();
  const client = (store as { client?: Redis }).client;
  if (client) countRoundTrips(client, counters);
  adapter = store.adapter;
  close = () => store.close();
} else if (spec.redisUrl) {
  const client = new Redis(spec.redisUrl);
  countRoundTrips(client, counters);
  adapter = plainRedisAdapter(client, spec.keyPrefix);
  close = async () => void (await client.quit());
}

const algs = ['RSA-OAEP', 'RSA-OAEP-256', 'ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'] as const;
const encs = ['A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512', 'A128GCM', 'A256GCM'] as const;
const provider = new Provider(`http://127.0.0.1:${spec.port}`, {
  ...(adapter ? { adapter } : {}),
  clients: [benchClient(spec.encryptionJwk, spec.signingAlg)],
  jwks: spec.jwks,
  cookies: { keys: [spec.cookieKey] },
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  responseTypes: ['code'],
  findAccount: (_ctx, sub) => ({
    accountId: sub,
    claims: () => ({
      sub,
      name: person?.name,
      given_name: person?.given_name,
      family_name: person?.family_name,
      birthdate: person?.birthdate,
      email: person?.email,
      email_verified: person?.email_verified,
    }),
  }),
  scopes: ['openid', 'profile', 'email'],
  claims: { openid: ['sub'], profile: ['name', 'given_name', 'family_name', 'birthdate'], email: ['email', 'email_verified'] },
  features: { devInteractions: { enabled: false }, encryption: { enabled: true }, jwtUserinfo: { enabled: true } },
  enabledJWA: {
    idTokenEncryptionAlgValues: [...algs],
    idTokenEncryptionEncValues: [...encs],
    userinfoEncryptionAlgValues: [...algs],
    userinfoEncryptionEncValues: [...encs],
    idTokenSigningAlgValues: ['RS256', 'PS256', 'ES256'],
    userinfoSigningAlgValues: ['RS256', 'PS256', 'ES256'],
  },
  ttl: { IdToken: 86400, AccessToken: 3600, AuthorizationCode: 60, Interaction: 3600, Session: 1209600, Grant: 1209600 },
});

async function formOf(ctx: Context): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

// The interaction pages, as oidc-provider's Koa example wires them (default URL /interaction/:uid).
const router = new Router();
router.get('/interaction/:uid', async (ctx) => {
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const client = await provider.Client.find(String(details.params.client_id));
  const clientName = client?.clientName ?? String(details.params.client_id);
  const path = `/interaction/${details.uid}`;
  if (details.prompt.name === 'login') {
    sendPage(ctx, loginPage({ action: `${path}/login`, clientName }));
    return;
  }
  const scope = typeof details.params.scope === 'string' ? details.params.scope : '';
  sendPage(
    ctx,
    consentPage({
      allowAction: `${path}/confirm`,
      denyAction: `${path}/abort`,
      clientName,
      redirectUri: String(details.params.redirect_uri),
      items: scope.split(' ').map((s) => ({ text: s, essential: false, channels: ['id_token' as const] })),
      channels: { idToken: 'encrypted', userinfo: 'encrypted' },
      delivery: 'id_token=encrypted userinfo=encrypted',
    }),
  );
});
router.post('/interaction/:uid/login', async (ctx) => {
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const form = await formOf(ctx);
  const ok = details.prompt.name === 'login' && form.get('login') === 'demo' && form.get('password') === 'demo';
  if (!ok) ctx.throw(401, 'wrong login');
  const returnTo = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: 'demo-0001' } }, { mergeWithLastSubmission: false });
  ctx.status = 303;
  ctx.redirect(returnTo);
});
router.post('/interaction/:uid/confirm', async (ctx) => {
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const accountId = details.session?.accountId;
  if (details.prompt.name !== 'consent' || !accountId) ctx.throw(400, 'no consent expected');
  const prompt = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
  const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  if (!grant) return ctx.throw(400, 'grant gone');
  if (prompt.missingOIDCScope) grant.addOIDCScope(prompt.missingOIDCScope.join(' '));
  if (prompt.missingOIDCClaims) grant.addOIDCClaims(prompt.missingOIDCClaims);
  const grantId = await grant.save();
  const returnTo = await provider.interactionResult(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  ctx.status = 303;
  ctx.redirect(returnTo);
});
provider.use(router.routes());

const server = provider.listen(spec.port, '127.0.0.1', () => process.stdout.write(`ready ${spec.port}\n`));
process.on('SIGTERM', () => server.close(() => void close().then(() => process.exit(0))));
