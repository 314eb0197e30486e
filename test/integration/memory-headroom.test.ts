import { describe, expect, it } from '@jest/globals';

import { confidentialClient } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, redirectParams } from '../helpers/flow.js';

const client = confidentialClient();
const publicClient = { client_id: 'public-rp', token_endpoint_auth_method: 'none' as const, redirect_uris: ['http://rp.localhost/public-cb'] };

/** Floods anonymous authorization requests until the store refuses new ones (nine tenths of the budget). */
async function floodToHeadroom(issuer: string): Promise<void> {
  for (const state of ['x'.repeat(6000), 'x']) {
    let refused = false;
    for (let i = 0; i < 1000 && !refused; i += 1) {
      const response = await fetch(codeFlowUrl(issuer, publicClient, { state }), { redirect: 'manual' });
      refused = !(response.headers.get('location') ?? '').includes('/interaction/');
    }
    expect(refused).toBe(true);
  }
}

describe('the last tenth of the embedded store is kept for flows under way (svc.memory-store.max-mb)', () => {
  const running = appPerSuite({ clients: [client, publicClient], properties: { 'svc.memory-store.max-mb': 1 } });

  it('attack: a stranger without cookies who then loops on GET /logout cannot take the last tenth: she who had started still finishes', async () => {
    const her = new FormBrowser();
    const { verifier, challenge } = pkcePair();
    await her.follow(codeFlowUrl(running.issuer, client, { state: 'hers', code_challenge: challenge }), running.baseUrl);
    expect(her.lastPage).toContain('id="login-form"');
    await floodToHeadroom(running.issuer);

    // Each cookie-less GET /logout makes oidc-provider save a new Session holding the logout form's state: a record
    // a stranger creates at will, refused at nine tenths as a new interaction is.
    let refused = 0;
    for (let i = 0; i < 400; i += 1) if ((await fetch(`${running.issuer}/logout`, { redirect: 'manual' })).status === 503) refused += 1;

    const signedIn = await her.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect({ refusedMostLogouts: refused > 390, signInStatus: signedIn.response?.status }).toEqual({ refusedMostLogouts: true, signInStatus: 200 });
    const { leftTo } = await her.submit('consent-allow', {}, running.baseUrl);
    const code = redirectParams(leftTo as string).get('code') as string;
    expect((await redeemCode(running.issuer, client, code, verifier)).body.id_token).toEqual(expect.any(String));
    // Honest twin: her own session is no stranger's, so she may still ask to sign out.
    expect((await her.follow(`${running.issuer}/logout`, running.baseUrl)).response?.status).toBe(200);
  });
});
