import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../examples/claim-modules/index.js';
import { runRelyingParty } from '../../examples/relying-party.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { signIn } from '../helpers/browser.js';

describe('examples/relying-party.ts against a live app (docs/relying-party.md)', () => {
  let running: RunningApp;
  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
  });
  afterAll(async () => running.close());

  it('registers with an initial access token, runs the flow and decrypts the ID token and UserInfo', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const result = await runRelyingParty({
      issuer: running.issuer,
      initialAccessToken: token,
      redirectUri: 'http://localhost:8080/callback',
      authorize: async (url) => (await signIn(url.href, { login: 'demo', password: 'demo' })).callbackUrl,
    });
    expect(result.clientId).toEqual(expect.any(String));
    expect(result.idTokenClaims).toMatchObject({ sub: 'demo-0001', name: 'Erika Mustermann', email: 'erika.mustermann@example.com' });
    expect(result.userinfo).toMatchObject({ sub: 'demo-0001', given_name: 'Erika', email_verified: true });
  });
});
