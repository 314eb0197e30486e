import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { STORED_PARAMETERS_MAX_BYTES } from '../../lib/claims/request-size.js';
import { createStore, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { bytesOf, everySvcName, vocabularyFlood, type ClaimsObject } from '../helpers/claims-requests.js';
import { registerClient, registeredClientUrl, type RegisteredClient } from '../helpers/clients.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { pkcePair, redirectParams, signIn } from '../helpers/flow.js';

const REDIRECT = 'https://rp.example/cb';
const REFUSAL = /^the authorization request would store (\d+) bytes of parameters; at most 14336 are allowed$/;

describe('what one authorization request stores is bounded (C5: an interaction record stays within 16 KiB)', () => {
  let running: RunningApp;
  let store: CountingStore;
  let rp: RegisteredClient;

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    // Modules that make every svc.* vocabulary name deliverable: the widest stored claims form.
    running = await startApp({ store, claimModules: [...createDemoClaimModules(), everySvcName] });
    rp = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  /** A form POST to /authorize (too long for a URL); the redirect's parameters or the interaction path. */
  const authorize = async (extra: Record<string, string>): Promise<{ status: number; location: string }> => {
    const body = new URLSearchParams({
      client_id: rp.metadata.client_id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      state: 'st-size',
      scope: 'openid',
      ...extra,
    });
    const response = await fetch(`${running.issuer}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
    return { status: response.status, location: response.headers.get('location') ?? '' };
  };
  const refusedSize = (location: string): number => {
    const redirect = redirectParams(location);
    expect([redirect.get('error'), redirect.get('state')]).toEqual(['invalid_request', 'st-size']);
    const match = REFUSAL.exec(redirect.get('error_description') ?? '');
    expect(match).not.toBeNull();
    return Number(match?.[1]);
  };

  it.each([
    ['a 20 000-character nonce', { nonce: 'n'.repeat(20_000) }],
    ['a claims request within its own budget whose stored form outgrows the request (every vocabulary name deliverable)', { claims: JSON.stringify(vocabularyFlood()) }],
    ['a claims request within budget plus a long nonce', { claims: JSON.stringify(vocabularyFlood()), nonce: 'n'.repeat(4000) }],
  ])('refuses %s with invalid_request naming the size, redirected with state, nothing stored', async (_name, extra) => {
    const before = store.writes('Interaction');
    const { status, location } = await authorize(extra);
    expect(status).toBe(303);
    expect(location.startsWith(REDIRECT)).toBe(true);
    expect(refusedSize(location)).toBeGreaterThan(STORED_PARAMETERS_MAX_BYTES);
    expect(store.writes('Interaction')).toBe(before);
  });

  it('accepts a 20 000-character login_hint, ignored and never stored (C3)', async () => {
    const before = store.written('Interaction').length;
    const { location } = await authorize({ login_hint: 'h'.repeat(20_000) });
    expect(location).toMatch(/^\/oidc\/v1\/interaction\/[\w-]+$/);
    const written = store.written('Interaction').slice(before);
    expect(written).toHaveLength(1);
    expect(written[0]).not.toContain('hhhh');
  });

  /** `svc.ver.[email.l2,<~960 characters>.[a,b]…]`: one deliverable alternative and 2^pairs that nobody provides. */
  const longBracket = (tag: string, pairs: number): string => {
    const tail = Array.from({ length: pairs }, (_, p) => `.[${'abcdefghijklmnop'[2 * p]},${'abcdefghijklmnop'[2 * p + 1]}]`).join('');
    return `svc.ver.[email.l2,${tag}${'x'.repeat(1024 - `svc.ver.[email.l2,${tag}`.length - tail.length - 1)}${tail}]`;
  };
  const vocabulary = (): Record<string, null> => {
    const names = '[mobile,email,idcard,driverslicense].[l0,l2,l3]';
    return { [`svc.ver.${names}`]: null, [`svc.ver.${names}.[nfc,video,api]`]: null, [`svc.auth.${names}`]: null, [`svc.auth.${names}.[nfc,video,api]`]: null };
  };
  /** Every name of {@link vocabulary}, each named on its own. */
  const vocabularyByName = (): Record<string, null> =>
    Object.fromEntries(
      ['ver', 'auth'].flatMap((family) =>
        ['mobile', 'email', 'idcard', 'driverslicense'].flatMap((dataset) =>
          ['l0', 'l2', 'l3'].flatMap((level) => ['', '.nfc', '.video', '.api'].map((procedure) => [`svc.${family}.${dataset}.${level}${procedure}`, null])),
        ),
      ),
    );
  /** `count` groups ("one of") of two vocabulary names each, every pair another: each is a group record of her grant. */
  const pairs = (count: number, family: 'ver' | 'auth'): Record<string, null> => {
    const names = Object.keys(vocabularyByName()).filter((n) => n.startsWith(`svc.${family}.`)).map((n) => n.slice(`svc.${family}.`.length));
    const out: Record<string, null> = {};
    for (let i = 0; i < names.length && Object.keys(out).length < count; i += 1) {
      for (let j = i + 1; j < names.length && Object.keys(out).length < count; j += 1) out[`svc.${family}.[${names[i] as string},${names[j] as string}]`] = null;
    }
    return out;
  };
  it.each([
    ['128 groups of two alternatives, 64 in each channel', { id_token: pairs(64, 'ver'), userinfo: pairs(64, 'auth') }],
    ['every vocabulary name in both channels, all deliverable', { id_token: vocabulary(), userinfo: vocabulary() }],
    ['every vocabulary name by its own name in both channels', { id_token: vocabularyByName(), userinfo: vocabularyByName() }],
    ['256 names within 8 KiB, all but 4 provided by nobody', { userinfo: { [longBracket('u', 7)]: null }, id_token: { [longBracket('i', 6)]: null, [longBracket('j', 5)]: null, [longBracket('k', 4)]: null } }],
  ])('one consent to %s stores a grant within 16 KiB', async (_label, claims: ClaimsObject) => {
    expect(bytesOf(claims)).toBeLessThanOrEqual(8192);
    const before = store.written('Grant').length;
    const { callbackUrl } = await signIn(registeredClientUrl(running.issuer, rp, { scope: 'openid', claims: JSON.stringify(claims) }));
    expect(callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
    const grants = store.written('Grant').slice(before).map((g) => Buffer.byteLength(g, 'utf8'));
    expect(grants.length).toBeGreaterThan(0);
    expect(Math.max(...grants)).toBeLessThanOrEqual(16 * 1024);
  });

  it('accepts a request of exactly the limit, and its interaction record stays within 16 KiB', async () => {
    // Learn the size of the other parameters from a refusal, then fill the nonce up to the limit.
    const probe = 'n'.repeat(20_000);
    const over = refusedSize((await authorize({ nonce: probe })).location);
    const nonce = 'n'.repeat(probe.length - (over - STORED_PARAMETERS_MAX_BYTES));
    const exact = await authorize({ nonce });
    expect(exact.location).toMatch(/^\/oidc\/v1\/interaction\/[\w-]+$/);
    expect(refusedSize((await authorize({ nonce: `${nonce}n` })).location)).toBe(STORED_PARAMETERS_MAX_BYTES + 1);
  });
});
