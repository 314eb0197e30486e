import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { errors } from 'oidc-provider';
import * as oidc from 'openid-client';

import type { ClaimModule } from '../../lib/claims/modules.js';
import { createDemoClaimModules, type DemoPerson } from '../../lib/demo/claim-modules.js';
import type { Logger } from '../../lib/index.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { registerClient, registeredClientUrl } from '../helpers/clients.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, runCodeFlow, signIn } from '../helpers/flow.js';
import { encryptRequestObject, registerSigningClient } from '../helpers/request-objects.js';
import { deletePrefix, dumpPrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';

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
};

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

describe('no user data in logs or in the store (C4, C10)', () => {
  const prefix = testPrefix('sentinels');
  const lines: string[] = [];
  const capture = (level: string): ((event: string, fields?: Record<string, unknown>) => void) => (event, fields) => {
    lines.push(JSON.stringify({ level, event, ...fields }));
  };
  const logger: Logger = { info: capture('info'), warn: capture('warn'), error: capture('error') };
  const originalWrites = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
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
    running = await startApp({
      logger,
      claimModules: createDemoClaimModules(PEOPLE),
      properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix },
    });
  });

  afterAll(async () => {
    process.stdout.write = originalWrites.out;
    process.stderr.write = originalWrites.err;
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('runs every kind of flow (query, pushed, request objects, each with a login_hint), then finds no sentinel in any log line or any Redis key or value', async () => {
    const rsa = await registerClient(running, 'rsa');
    const ecdh = await registerClient(running, 'ecdh');
    const plain = await registerClient(running, 'plain');
    const optout = await registerClient(running, 'optout');
    const all = 'openid profile email svc.insurance svc.insurance.verified';
    const claims = JSON.stringify({
      userinfo: { 'svc.ver.[driverslicense,idcard].l3.nfc': { essential: true }, 'svc.ver.mobile.l2.api': null },
      id_token: { 'svc.ver.[mobile,email].l2': null, 'svc.auth.mobile.l2.otp': null, email: { value: S.email } },
    });
    const delivered: string[] = [];
    for (const client of [rsa, ecdh, optout]) {
      const flow = await runCodeFlow(running.issuer, client.metadata, { scope: all, configure: client.configure, params: { claims, login_hint: S.hint } });
      delivered.push(JSON.stringify(flow.userinfo), JSON.stringify(flow.claims));
    }
    const withheld = await runCodeFlow(running.issuer, plain.metadata, { scope: all });
    // The hint inside a pushed form, a signed request object by value, and one pushed (encrypted).
    const signer = await registerSigningClient(running);
    const config = await signer.config();
    const request = { redirect_uri: 'https://rp.example/cb', scope: 'openid email', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', login_hint: S.hint, claims };
    const jar = await oidc.buildAuthorizationUrlWithJAR(config, request, { key: signer.signingKey, kid: signer.kid });
    const encrypted = new URLSearchParams(jar.searchParams);
    encrypted.set('request', await encryptRequestObject(running.issuer, jar.searchParams.get('request') as string, 'RSA-OAEP-256'));
    // Each is scanned while its interaction waits at the login page (the record is gone afterwards).
    const midFlow: string[] = [];
    for (const url of [await oidc.buildAuthorizationUrlWithPAR(config, request), jar, await oidc.buildAuthorizationUrlWithPAR(config, encrypted), new URL(`${running.issuer}/authorize?${new URLSearchParams({ ...request, client_id: rsa.metadata.client_id, response_type: 'code' }).toString()}`)]) {
      const browser = new FormBrowser();
      await browser.follow(url.href, running.baseUrl);
      expect(browser.lastPage).toContain('id="login-form"');
      midFlow.push(...[...(await dumpPrefix(SHARED_REDIS_URL, prefix))].flat());
    }
    // The flows really carried the sentinels where they may (so the scan below is meaningful) …
    expect(delivered.join()).toContain(S.name);
    expect(delivered.join()).toContain(S.phone);
    expect(JSON.stringify(withheld.userinfo)).not.toContain(S.name);

    // … and nowhere else.
    const stored = [...midFlow, ...[...(await dumpPrefix(SHARED_REDIS_URL, prefix))].flat()];
    expect(stored.length).toBeGreaterThan(10);
    const haystacks = { logs: lines.join('\n'), redis: stored.join('\n') };
    for (const [where, text] of Object.entries(haystacks)) {
      for (const [name, sentinel] of Object.entries(S)) {
        expect({ where, name, found: text.includes(sentinel) }).toEqual({ where, name, found: false });
      }
    }
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
