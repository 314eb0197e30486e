import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { confidentialClient, pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, redirectParams, runCodeFlow, signIn } from '../helpers/flow.js';

const ACCOUNT = 'demo-0001';
const COOKIE_KEYS = 'subject-consent-cookie-key-0123456789abc';
/** A static client without `subject_type`: pairwise by default (svc.subject.default-type). */
const DEFAULTED = confidentialClient({ client_id: 'static-defaulted', redirect_uris: ['https://defaulted.example/cb'] });
/** A static client the operator registers pairwise explicitly, and later public. */
const EXPLICIT = confidentialClient({ client_id: 'static-explicit', redirect_uris: ['https://explicit.example/cb'], subject_type: 'pairwise' });
/** A static client registered public, and later pairwise. */
const WAS_PUBLIC = confidentialClient({ client_id: 'static-was-public', redirect_uris: ['https://was-public.example/cb'], subject_type: 'public' });

/**
 * Consent covers how her data travels, the identifier she is known by included (C8, docs/spec-decisions.md): a grant
 * given while a client received a pairwise `sub` does not cover that client receiving her account identifier, which
 * every public client receives too. A static client's subject type is the operator's configuration, so it can change
 * at a restart (RFC 7592 cannot change it: test/e2e/pairwise-subjects.test.ts); here process A serves the clients as
 * first configured and process B, on the same store and with the same cookie keys, as configured after the change.
 */
describe('a grant given for a pairwise sub does not cover a public one (C8)', () => {
  let before: RunningApp;
  let after: RunningApp;
  const shared = { 'svc.cookies.keys': COOKIE_KEYS };

  beforeAll(async () => {
    before = await startApp({ clients: [DEFAULTED, EXPLICIT, WAS_PUBLIC], properties: shared });
    after = await startApp({
      clients: [DEFAULTED, { ...EXPLICIT, subject_type: 'public' }, { ...WAS_PUBLIC, subject_type: 'pairwise' }],
      store: before.app.svc.store,
      // Another port, so another issuer: the store moves to it (before, claimed, goes on serving).
      properties: { ...shared, 'svc.subject.default-type': 'public', 'svc.redis.previous-base-url': before.baseUrl },
    });
  });
  afterAll(async () => {
    await after.close();
    await before.close();
  });

  /** Her grant of `client` at A, with an access token and a code issued there and not yet redeemed. */
  async function grantedAtA(client: ClientMetadata): Promise<{ browser: FormBrowser; sub: string; accessToken: string; code: string; verifier: string }> {
    const browser = new FormBrowser();
    const flow = await runCodeFlow(before.issuer, client, { browser });
    const { verifier, challenge } = pkcePair();
    const silent = await signIn(codeFlowUrl(before.issuer, client, { prompt: 'none', code_challenge: challenge }), { browser });
    const code = silent.callbackUrl.searchParams.get('code');
    if (!code) throw new Error(`no code: ${silent.callbackUrl.href}`);
    return { browser, sub: flow.claims.sub, accessToken: flow.tokens.access_token, code, verifier };
  }

  /** What a silent authorization request of `client` at B answers `browser`: its error, or `code`. */
  async function silentlyAtB(browser: FormBrowser, client: ClientMetadata): Promise<string> {
    const { leftTo } = await browser.follow(codeFlowUrl(after.issuer, client, { prompt: 'none' }), after.baseUrl);
    const params = redirectParams(leftTo as string);
    return params.get('error') ?? (params.get('code') ? 'code' : String(leftTo));
  }

  it.each([
    ['made public by svc.subject.default-type (the client names no subject_type)', DEFAULTED, DEFAULTED],
    ['made public by its subject_type', EXPLICIT, { ...EXPLICIT, subject_type: 'public' }],
  ] as [string, ClientMetadata, ClientMetadata][])('attack: a static client %s: her pairwise grant asks again, and its code and access token never deliver her account id', async (_how, atA, atB) => {
    const granted = await grantedAtA(atA);
    expect(granted.sub).toBe(pairwiseSubOf(String(atA.redirect_uris?.[0])));

    expect(await silentlyAtB(granted.browser, atB)).toBe('consent_required');

    const redeemed = await redeemCode(after.issuer, atB, granted.code, granted.verifier);
    expect([redeemed.status, redeemed.body.error, redeemed.body.id_token, redeemed.body.access_token]).toEqual([400, 'invalid_grant', undefined, undefined]);

    const userinfo = await fetch(`${after.issuer}/userinfo`, { headers: { authorization: `Bearer ${granted.accessToken}` } });
    const body = await userinfo.text();
    expect([userinfo.status, (JSON.parse(body) as { error?: string }).error]).toEqual([401, 'invalid_token']);
    expect(body).not.toContain(ACCOUNT);

    // The page tells her what the client now receives; allowed, her consent covers it.
    const again = await runCodeFlow(after.issuer, atB, { browser: granted.browser });
    expect(granted.browser.lastPage).toContain('id="consent-shared-subject"');
    expect([again.claims.sub, again.userinfo.sub]).toEqual([ACCOUNT, ACCOUNT]);
    expect(await silentlyAtB(granted.browser, atB)).toBe('code');
  });

  it('honest: a static client turned from public to pairwise keeps her grant: silently a code, its code and token work, with pairwise subs', async () => {
    const granted = await grantedAtA(WAS_PUBLIC);
    expect(granted.sub).toBe(ACCOUNT);
    const atB = { ...WAS_PUBLIC, subject_type: 'pairwise' as const };
    const pairwise = pairwiseSubOf(String(WAS_PUBLIC.redirect_uris?.[0]));

    expect(await silentlyAtB(granted.browser, atB)).toBe('code');
    const redeemed = await redeemCode(after.issuer, atB, granted.code, granted.verifier);
    expect([redeemed.status, decodeJwt(String(redeemed.body.id_token)).sub]).toEqual([200, pairwise]);
    const userinfo = await fetch(`${after.issuer}/userinfo`, { headers: { authorization: `Bearer ${granted.accessToken}` } });
    expect([userinfo.status, ((await userinfo.json()) as { sub?: string }).sub]).toEqual([200, pairwise]);
  });

  it('honest: a client whose subject type did not change keeps working across the restart, public and pairwise alike', async () => {
    const browser = new FormBrowser();
    const stays = await startApp({ clients: [WAS_PUBLIC, DEFAULTED], store: before.app.svc.store, properties: { ...shared, 'svc.redis.previous-base-url': after.baseUrl } });
    try {
      await runCodeFlow(before.issuer, WAS_PUBLIC, { browser });
      await runCodeFlow(before.issuer, DEFAULTED, { browser });
      const silently = async (client: ClientMetadata): Promise<string | null> =>
        redirectParams((await browser.follow(codeFlowUrl(stays.issuer, client, { prompt: 'none' }), stays.baseUrl)).leftTo as string).get('code');
      expect(await silently(WAS_PUBLIC)).toEqual(expect.any(String));
      expect(await silently(DEFAULTED)).toEqual(expect.any(String));
    } finally {
      await stays.close();
    }
  });
});
