import { createHash, randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { errors, type AdapterPayload } from 'oidc-provider';
import * as oidc from 'openid-client';

import { createMemoryStore } from '../../adapters/memory.js';
import { decorateAdapter, type SvcStore } from '../../adapters/store.js';
import type { ClaimModule } from '../../lib/claims/modules.js';
import { createStaticAuthenticator } from '../../lib/demo/accounts.js';
import { createDemoClaimModules, type DemoPerson } from '../../lib/demo/claim-modules.js';
import type { Logger } from '../../lib/index.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';
import { registerClient, registeredClientUrl } from '../helpers/clients.js';
import { codeFlowUrl, FormBrowser, loginAttempts, pkcePair, redeemCode, runCodeFlow, signIn } from '../helpers/flow.js';
import { managementCalls } from '../helpers/management-calls.js';
import { encryptRequestObject, registerSigningClient } from '../helpers/request-objects.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';

/** Unique values that must never show up outside an encrypted token or UserInfo response. */
const S = {
  name: 'SENTINEL-name-4c1d9e',
  given: 'SENTINEL-given-8a2f',
  family: 'SENTINEL-family-1b7e',
  birthdate: '1903-07-29',
  email: 'sentinel-mail-93bd@example.test',
  insurance: 'SENTINEL-insurance-77c2',
  phone: 'SENTINEL-phone-0e4f',
  nationality: 'SENTINEL-nat-3d1a',
  /** A login_hint, as a client sends the person's address: accepted, ignored, never stored (C3). */
  hint: 'sentinel-hint-6f0a@example.test',
  /** What she types on the login page, and a stranger's guesses at another name. */
  login: 'sentinel-login-a7c3',
  password: 'SENTINEL-pw-59e2',
  strangerLogin: 'sentinel-stranger-e2d0',
  /** A requested claim value she does not hold (C5: kept only as a keyed MAC, as her e-mail address asked as a value). */
  value: 'sentinel-value-71ad@example.test',
  /** Inside an id_token_hint, the other ignored parameters (C3), and a logout_hint. */
  hintedMail: 'sentinel-idth-2b9c@example.test',
  uiLocales: 'x-sentinel-ui',
  claimsLocales: 'x-sentinel-cl',
  acr: 'urn:sentinel:acr-9d',
  logoutHint: 'sentinel-logouthint-4d2e@example.test',
  /** Her browser and address (behind svc.proxy), and the address of the operator's failed and right logins. */
  userAgent: 'SentinelAgent-4b1f',
  address: '203.0.113.219',
  operatorAddress: '198.51.100.47',
  invitee: 'sentinel-invitee-3e8d@example.test',
};

/** Values a client sends that the protocol must keep until it answers: the scan must see them (it reads what the flows stored). */
const KEPT = { state: 'sentinel-state-c41e', nonce: 'sentinel-nonce-88af' };

/** The models whose ids are bearer values, by the name of oidc-provider's event when one is saved: a session's id is her cookie's value. */
const BEARERS = ['session', 'access_token', 'authorization_code', 'initial_access_token', 'registration_access_token'] as const;

const PEOPLE: Record<string, DemoPerson> = {
  'demo-0001': {
    name: S.name,
    given_name: S.given,
    family_name: S.family,
    birthdate: S.birthdate,
    email: S.email,
    email_verified: true,
    healthInsuranceNumber: S.insurance,
    idcard: { given_name: S.given, family_name: S.family, birthdate: S.birthdate, nationality: S.nationality, verified_at: '2025-01-01T00:00:00Z' },
    verifiedEmail: { email: S.email, verified_at: '2025-01-01T00:00:00Z' },
    verifiedMobile: { phone_number: S.phone, verified_at: '2025-01-01T00:00:00Z' },
    mobileOtpCompletedAt: '2025-01-01T00:00:00Z',
  },
};

/** A browser sending her user agent and, through the trusted proxy, her address with every request. */
class HerBrowser extends FormBrowser {
  override async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('user-agent', S.userAgent);
    headers.set('x-forwarded-for', S.address);
    return super.request(url, { ...init, headers });
  }
}

/**
 * `inner` with everything it is asked to keep (payloads, single-use inserts, attempt counters' calls) added to `writes` as
 * JSON, each record without its own id as its `jti` (the Redis store leaves it out; the memory store holds it in the heap
 * beside the cookie keys, read by nobody else).
 */
function tapped(inner: SvcStore, writes: string[]): SvcStore {
  const keep = (...args: unknown[]): number => writes.push(JSON.stringify(args));
  const record = (id: string, payload: AdapterPayload): AdapterPayload => (payload.jti === id ? { ...payload, jti: undefined } : payload);
  const attempts = new Proxy(inner.attempts, {
    get: (target, name) => {
      const member: unknown = Reflect.get(target, name);
      return typeof member === 'function' ? (...args: unknown[]) => (keep(name, ...args), member.apply(target, args) as unknown) : member;
    },
  });
  return {
    ...inner,
    attempts,
    adapter: (model) => {
      const adapter = inner.adapter(model);
      return decorateAdapter(adapter, { upsert: async (id, payload, expiresIn) => (keep(model, record(id, payload)), adapter.upsert(id, payload, expiresIn)) });
    },
    insert: async (model, id, payload, expiresIn) => (keep(model, record(id, payload)), inner.insert(model, id, payload, expiresIn)),
  };
}

/** Every command a Redis server runs from now on, as JSON, until `stop` (which waits for the last command sent before it). */
async function monitorRedis(url: string): Promise<{ commands: string[]; stop(): Promise<void>; close(): void }> {
  const commands: string[] = [];
  // `monitor()` opens a connection of its own; this one connects only to send the marker.
  const client = new Redis(url, { lazyConnect: true });
  const monitor = await client.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => commands.push(JSON.stringify(args)));
  const close = (): void => {
    client.disconnect();
    monitor.disconnect();
  };
  return {
    commands,
    async stop() {
      const marker = `sentinel-scan-end-${randomUUID()}`;
      await client.get(marker);
      while (!commands.some((c) => c.includes(marker))) await new Promise((resolve) => setImmediate(resolve));
      close();
    },
    close,
  };
}

/** What `text` says once each base64/base64url run (a JWT's parts too) and its percent-encoding are decoded, three layers deep. */
function decodedLayers(text: string, depth = 0): string[] {
  if (depth > 3) return [];
  const out: string[] = [];
  for (const run of text.match(/[\w+/-]{16,}/g) ?? []) {
    const decoded = Buffer.from(run, 'base64').toString('utf8');
    if (/[\x20-\x7e]{6}/.test(decoded)) out.push(decoded, ...decodedLayers(decoded, depth + 1));
  }
  try {
    out.push(decodeURIComponent(text.replace(/\+/g, ' ')));
  } catch {
    // not percent-encoding: the text as it is was searched already
  }
  return out;
}

/** How `sentinel` shows in `text`: in clear (any case), decoded, or as its unkeyed SHA-256 (a dump would confirm a guess), else undefined. */
function foundIn(text: string, sentinel: string, layers: readonly string[]): string | undefined {
  const lower = sentinel.toLowerCase();
  if (text.toLowerCase().includes(lower)) return 'clear';
  if (layers.some((layer) => layer.toLowerCase().includes(lower))) return 'encoded';
  const hashes = [sentinel, lower].flatMap((v) => (['hex', 'base64', 'base64url'] as const).map((f) => createHash('sha256').update(v).digest(f)));
  return hashes.some((h) => text.includes(h.slice(0, 22))) ? 'sha256' : undefined;
}

describe.each(['memory', 'redis'] as const)('no user data in logs or in the store (C3, C4, C10) [%s]', (kind) => {
  const lines: string[] = [];
  const capture = (level: string): ((event: string, fields?: Record<string, unknown>) => void) => (event, fields) => {
    lines.push(JSON.stringify({ level, event, ...fields }));
  };
  const logger: Logger = { info: capture('info'), warn: capture('warn'), error: capture('error') };
  const originalWrites = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  const writes: string[] = [];
  let redis: OwnRedis | undefined;
  let monitor: Awaited<ReturnType<typeof monitorRedis>> | undefined;
  let running: RunningApp;

  beforeAll(async () => {
    // Everything the process prints while the flows run is captured too.
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      lines.push(String(chunk));
      return originalWrites.out(chunk, ...rest);
    });
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      lines.push(String(chunk));
      return originalWrites.err(chunk, ...rest);
    });
    if (kind === 'redis') {
      redis = await startOwnRedis();
      monitor = await monitorRedis(redis.url);
    }
    running = await startApp({
      logger,
      claimModules: createDemoClaimModules(PEOPLE),
      authenticator: createStaticAuthenticator([{ accountId: 'demo-0001', login: S.login, password: S.password }]),
      ...(redis ? {} : { store: tapped(createMemoryStore(), writes) }),
      properties: {
        ...(redis ? { 'svc.redis.url': redis.url } : {}),
        'svc.proxy': true,
        'svc.management.user': 'sentinel-operator',
        'svc.management.password': 'sentinel-operator-password',
        'svc.mail.outbox-dir': mkdtempSync(join(tmpdir(), 'svc-sentinel-outbox-')),
      },
    });
  });

  afterAll(async () => {
    process.stdout.write = originalWrites.out;
    process.stderr.write = originalWrites.err;
    await running.close();
    monitor?.close();
    redis?.dispose();
  });

  it('runs every kind of flow (query, form post, pushed, request objects; hints, locales, failed logins, device cookie, consent withdrawn, logout, operator), then finds no sentinel, and no session id or token in clear, in any log line or anything the store was given', async () => {
    const handedOut = new Map<string, string>();
    // The Provider is an EventEmitter; its typings list each event by name, not one built from a model's.
    const events = running.app.svc.provider as unknown as EventEmitter;
    for (const kind of BEARERS) events.on(`${kind}.saved`, (saved: { jti: string }) => void handedOut.set(saved.jti, kind));
    const rsa = await registerClient(running, 'rsa');
    const ecdh = await registerClient(running, 'ecdh');
    const plain = await registerClient(running, 'plain');
    const optout = await registerClient(running, 'optout');
    const all = 'openid profile email svc.insurance svc.insurance.verified';
    const claims = JSON.stringify({
      userinfo: { 'svc.ver.[driverslicense,idcard].l3.nfc': { essential: true }, 'svc.ver.mobile.l2.api': null },
      id_token: { 'svc.ver.[mobile,email].l2': { value: S.value }, 'svc.auth.mobile.l2.otp': null, email: { value: S.email } },
    });
    const unsecured = `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ email: S.hintedMail })).toString('base64url')}.`;
    const hints = { login_hint: S.hint, id_token_hint: unsecured, ui_locales: S.uiLocales, claims_locales: S.claimsLocales, acr_values: S.acr };
    const her = new HerBrowser();
    const delivered: string[] = [];
    for (const client of [rsa, ecdh, optout]) {
      const flow = await runCodeFlow(running.issuer, client.metadata, { scope: all, configure: client.configure, browser: her, login: S.login, password: S.password, params: { claims, ...hints } });
      delivered.push(JSON.stringify(flow.userinfo), JSON.stringify(flow.claims));
    }
    const withheld = await runCodeFlow(running.issuer, plain.metadata, { scope: all, login: S.login, password: S.password });
    // Wrong passwords: hers from a browser without her device cookie, and a stranger's name; then one from her device.
    const guesses = await loginAttempts(running, rsa.metadata);
    for (const login of [S.login, S.strangerLogin]) expect((await guesses.attempt(login, 'wrong', S.address)).status).toBe(403);
    expect((await (await loginAttempts(running, rsa.metadata, her)).attempt(S.login, 'wrong', S.address)).status).toBe(403);
    const deviceId = (her.cookie('svc.device') ?? '').split('.')[0] as string;
    expect(deviceId).toMatch(/^[\w-]{22}$/);
    // Her consent to the opt-out client withdrawn for a wider request (prompt=consent, Deny).
    const denied = await signIn(registeredClientUrl(running.issuer, optout, { scope: 'openid profile', prompt: 'consent' }), { browser: her, consent: 'deny' });
    expect(denied.callbackUrl.searchParams.get('error')).toBe('access_denied');
    // The hints inside a pushed form, a signed request object by value, and one pushed (encrypted); a posted form.
    const signer = await registerSigningClient(running);
    const config = await signer.config();
    const request = { redirect_uri: 'https://rp.example/cb', scope: 'openid email', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', claims, state: KEPT.state, nonce: KEPT.nonce, ...hints };
    const jar = await oidc.buildAuthorizationUrlWithJAR(config, request, { key: signer.signingKey, kid: signer.kid });
    const encrypted = new URLSearchParams(jar.searchParams);
    encrypted.set('request', await encryptRequestObject(running.issuer, jar.searchParams.get('request') as string, 'RSA-OAEP-256'));
    const query = { ...request, client_id: String(rsa.metadata.client_id), response_type: 'code' };
    const posted = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(query).toString() };
    for (const [url, init] of [[await oidc.buildAuthorizationUrlWithPAR(config, request)], [jar], [await oidc.buildAuthorizationUrlWithPAR(config, encrypted)], [new URL(`${running.issuer}/authorize?${new URLSearchParams(query).toString()}`)], [new URL(`${running.issuer}/authorize`), posted]] as const) {
      const browser = new HerBrowser();
      await browser.follow(url.href, running.baseUrl, init);
      expect(browser.lastPage).toContain('id="login-form"');
    }
    // Her logout with hints, answered.
    await her.follow(`${running.issuer}/logout?${new URLSearchParams({ client_id: String(rsa.metadata.client_id), logout_hint: S.logoutHint, ui_locales: S.uiLocales, state: KEPT.state }).toString()}`, running.baseUrl);
    expect((await her.submit('op.logoutForm', { logout: 'yes' }, running.baseUrl)).response?.status).toBe(200);
    // The operator: a wrong password, an invitation, a reset of her login name, her revocation.
    const operator = managementCalls(running, basicAuthorization('sentinel-operator', 'sentinel-operator-password'));
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await operator('GET', '/oidc/v1/management/clients', { auth: basicAuthorization(S.login, S.password), from: S.operatorAddress })).status).toBe(401);
    expect((await operator('GET', `/oidc/v1/management/invite_client?email=${encodeURIComponent(S.invitee)}`, { from: S.operatorAddress })).status).toBe(202);
    expect((await operator('POST', '/oidc/v1/management/logins/reset', { headers: form, body: `login=${S.login}`, from: S.operatorAddress })).status).toBe(200);
    expect((await operator('POST', '/oidc/v1/management/subjects/revoke', { headers: form, body: 'sub=demo-0001', from: S.operatorAddress })).status).toBe(200);

    // The flows really carried the sentinels where they may (so the scan below is meaningful) …
    expect(delivered.join()).toContain(S.name);
    expect(delivered.join()).toContain(S.phone);
    expect(JSON.stringify(withheld.userinfo)).not.toContain(S.name);
    await monitor?.stop();
    const stored = [...writes, ...(monitor?.commands ?? [])].join('\n');
    const storedLayers = decodedLayers(stored);
    // … the scan reads what the flows stored (the nonce a client sent, kept until it is answered: in clear, and in pushed requests) …
    const unclear = stored.replaceAll(KEPT.nonce, '');
    expect([foundIn(stored, KEPT.nonce, []), foundIn(unclear, KEPT.nonce, decodedLayers(unclear))]).toEqual(['clear', 'encoded']);
    // … and finds no sentinel there, nor in the logs.
    const haystacks = { logs: [lines.join('\n'), decodedLayers(lines.join('\n'))] as const, store: [stored, storedLayers] as const };
    for (const [where, [text, layers]] of Object.entries(haystacks)) {
      for (const [name, sentinel] of Object.entries({ ...S, deviceId })) {
        // A failed management login logs its address (C7: the operator's record of who knocked); the store keeps a keyed MAC.
        if (where === 'logs' && name === 'operatorAddress') continue;
        expect({ where, name, found: foundIn(text, sentinel, layers) }).toEqual({ where, name, found: undefined });
      }
      // A bearer value's SHA-256 names its record: it cannot be guessed back from it (256 random bits and more).
      for (const [value, kind] of handedOut) expect({ where, kind, found: foundIn(text, value, layers) }).toEqual({ where, kind, found: expect.not.stringMatching(/^(clear|encoded)$/) });
    }
    expect(new Set(handedOut.values())).toEqual(new Set(BEARERS));
  });
});

describe('what a claim module throws never reaches the client or the logs (C4) [memory]', () => {
  /** What a module's source might say about the person's record, in an error the provider would otherwise show. */
  const SAID = 'sentinel-record-5e1b@example.test';
  const thrown: Record<string, () => Error> = {
    'an HTTP error with expose (http-errors, ctx.throw)': () => Object.assign(new Error(`no record for ${SAID}`), { status: 404, statusCode: 404, expose: true }),
    "an oidc-provider error (exposed, its description shown)": () => new errors.InvalidRequest(`record of ${SAID} is locked`),
    'a plain error': () => new Error(`lookup of ${SAID} failed`),
    // A driver's error whose code is read off a connection closed since: reading it throws, exposed.
    'an error whose code getter throws an oidc-provider error': () =>
      Object.defineProperty(new Error('lookup failed'), 'code', { get: () => { throw new errors.InvalidRequest(`record of ${SAID} is locked`); } }),
  };
  const client = confidentialClient({ client_id: 'optout-rp', allow_unencrypted_userinfo: true });
  const lines: string[] = [];
  const capture = (level: string): ((event: string, fields?: Record<string, unknown>) => void) => (event, fields) => {
    lines.push(JSON.stringify({ level, event, ...fields }));
  };
  let failure: (() => Error) | undefined;
  /** Makes what a module returns throw once read (the first HTTP error above): a lazy record of an ORM, say. */
  let lazily: (<T>(answer: T) => T) | undefined;
  let running: RunningApp;

  beforeAll(async () => {
    const failing: ClaimModule[] = createDemoClaimModules().map((m) => ({
      ...m,
      resolve: async (accountId: string, claims: readonly string[]) => {
        if (failure) throw failure();
        const answer = await m.resolve(accountId, claims);
        return lazily ? lazily(answer) : answer;
      },
      ...(m.verified && {
        verified: {
          ...m.verified,
          resolve: async (accountId: string) => {
            const records = await (m.verified as NonNullable<ClaimModule['verified']>).resolve(accountId);
            return records.map((record) => (lazily ? { ...record, claims: lazily(record.claims) } : record));
          },
        },
      }),
    }));
    running = await startApp({ clients: [client], claimModules: failing, logger: { info: capture('info'), warn: capture('warn'), error: capture('error') } });
  });
  afterAll(async () => running.close());

  const signedIn = async (): Promise<{ code: string; verifier: string }> => {
    const { verifier, challenge } = pkcePair();
    const claims = JSON.stringify({ userinfo: { email: null } });
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge, scope: 'openid profile', claims }));
    return { code: callbackUrl.searchParams.get('code') as string, verifier };
  };
  /** The UserInfo answer: its status, its body as JSON, and all it says (the challenge header and the body) as text. */
  const userinfo = async (token: string): Promise<{ status: number; body: Record<string, unknown>; text: string }> => {
    const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    const raw = await response.text();
    return { status: response.status, body: JSON.parse(raw) as Record<string, unknown>, text: `${response.headers.get('www-authenticate') ?? ''} ${raw}` };
  };

  /** The token endpoint, then UserInfo, each asked while `hold` has set a fault (and `release` cleared it after). */
  const underFault = async (hold: () => void, release: () => void) => {
    const { code, verifier } = await signedIn();
    const during = async <T>(ask: () => Promise<T>): Promise<T> => {
      hold();
      try {
        return await ask();
      } finally {
        release();
      }
    };
    const token = await during(() => redeemCode(running.issuer, client, code, verifier));
    expect([token.status, token.body.error]).toEqual([500, 'server_error']);
    // The code was not spent by the failure: redeemed once the module answers again.
    const redeemed = await redeemCode(running.issuer, client, code, verifier);
    expect(redeemed.status).toBe(200);
    const answer = await during(() => userinfo(redeemed.body.access_token as string));
    expect([answer.status, answer.body.error]).toEqual([500, 'server_error']);
    return { token, answer };
  };

  it.each(Object.keys(thrown))('%s thrown at the token endpoint or at UserInfo: 500 server_error, the message in no answer and no log line', async (kind) => {
    const { token, answer } = await underFault(() => (failure = thrown[kind]), () => (failure = undefined));
    expect([JSON.stringify(token.body), answer.text, lines.join('\n')].filter((text) => text.includes(SAID))).toEqual([]);
    // What the operator needs instead: which module failed, and the name of what it threw.
    const logged = lines.filter((line) => line.includes('"event":"server_error"') && line.includes('SVC_CLAIM_MODULE_FAILED'));
    expect(logged).not.toEqual([]);
    for (const line of logged) expect(JSON.parse(line)).toMatchObject({ plugin: expect.stringMatching(/\S/), cause_name: expect.stringMatching(/^[A-Za-z]/) });
  });

  const raise = (): never => {
    throw (thrown['an HTTP error with expose (http-errors, ctx.throw)'] as () => Error)();
  };
  /** Each member of a record made to throw when read. */
  const eachMember = (make: (value: unknown) => PropertyDescriptor) => <T>(answer: T): T =>
    Object.defineProperties({}, Object.fromEntries(Object.keys(answer as object).map((key) => [key, { enumerable: true, ...make(key) }]))) as T;
  const throwsOnRead: Record<string, <T>(answer: T) => T> = {
    'a getter': eachMember(() => ({ get: raise })),
    'toJSON of a value': eachMember(() => ({ value: { toJSON: raise } })),
  };

  it.each(Object.keys(throwsOnRead))('%s of what the module returns throwing when read, at the token endpoint or at UserInfo: 500 server_error, the message in no answer', async (kind) => {
    const { token, answer } = await underFault(() => (lazily = throwsOnRead[kind]), () => (lazily = undefined));
    expect([JSON.stringify(token.body), answer.text, lines.join('\n')].filter((text) => text.includes(SAID))).toEqual([]);
  });

  it.each(Object.keys(throwsOnRead))('%s of the verified data a module returns throwing when read: 500 server_error, the message in no answer', async (kind) => {
    const rsa = await registerClient(running, 'rsa');
    const { verifier, challenge } = pkcePair();
    const claims = JSON.stringify({ id_token: { verified_claims: { verification: { trust_framework: null }, claims: { given_name: null } } } });
    const { callbackUrl } = await signIn(registeredClientUrl(running.issuer, rsa, { code_challenge: challenge, claims }));
    lazily = throwsOnRead[kind];
    let token: { status: number; body: Record<string, unknown> };
    try {
      token = await redeemCode(running.issuer, rsa.metadata, callbackUrl.searchParams.get('code') as string, verifier);
    } finally {
      lazily = undefined;
    }
    expect([token.status, token.body.error, JSON.stringify(token.body).includes(SAID)]).toEqual([500, 'server_error', false]);
  });

  it('honest: the same module answering delivers her data at the token endpoint and at UserInfo', async () => {
    const { code, verifier } = await signedIn();
    const token = await redeemCode(running.issuer, client, code, verifier);
    expect(token.status).toBe(200);
    const answer = await userinfo(token.body.access_token as string);
    expect([answer.status, answer.body.email]).toEqual([200, 'erika.mustermann@example.com']);
  });
});
