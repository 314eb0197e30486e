import { describe, expect, it } from '@jest/globals';

import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { pairwiseSubOf } from '../helpers/app.js';
import { registerClient } from '../helpers/clients.js';
import { runCodeFlow } from '../helpers/flow.js';
import { manage } from '../helpers/registration.js';
import { appPerSuite } from '../helpers/suite-app.js';

describe('a native app whose later redirect URI is a private-use scheme with a relying party\'s host as authority (C12.12)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });
  /** A code flow of `client` redirected to `redirect` (one of its registered redirect URIs). */
  const subAt = async (client: ClientMetadata, redirect: string): Promise<string> =>
    (await runCodeFlow(running.issuer, { ...client, redirect_uris: [redirect] }, { skipUserinfo: true })).claims.sub;

  it("an app listing the victim's https redirect first and its own scheme on the victim's host second does not receive the victim's subs", async () => {
    const victim = await registerClient(running, 'plain', { redirect_uris: ['https://bank.example/cb'] });
    const victimSub = await subAt(victim.metadata, 'https://bank.example/cb');
    expect(victimSub).toBe(pairwiseSubOf('https://bank.example/cb'));
    // The app never receives a code at bank.example; it receives one at its own scheme on the device.
    const app = await registerClient(running, 'plain', {
      application_type: 'native',
      redirect_uris: ['https://bank.example/cb', 'com.attacker.app://bank.example/cb'],
    });
    expect(await subAt(app.metadata, 'com.attacker.app://bank.example/cb')).not.toBe(victimSub);
  });

  it('an explicit pairwise app with such a pair of redirect URIs is not given the https host as its sector', async () => {
    const app = await registerClient(running, 'plain', {
      application_type: 'native',
      subject_type: 'pairwise',
      redirect_uris: ['https://shop.example/cb', 'com.attacker.app://shop.example/cb'],
    });
    expect(await subAt(app.metadata, 'com.attacker.app://shop.example/cb')).not.toBe(pairwiseSubOf('https://shop.example/cb'));
  });

  it("an update cannot add such a redirect URI to a native app on the victim's https host", async () => {
    const app = await registerClient(running, 'plain', { application_type: 'native', redirect_uris: ['https://mail.example/cb'] });
    const { registration_access_token: token, registration_client_uri: uri, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = app.metadata as Record<string, unknown>;
    const res = await manage(uri as string, 'PUT', token as string, { ...metadata, redirect_uris: ['https://mail.example/cb', 'com.attacker.app://mail.example/cb'] });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_redirect_uri']);
    expect(res.body.error_description).toMatch(/sector is fixed/);
  });

  it('honest: a native app on a claimed https redirect URI keeps that host as its sector', async () => {
    const app = await registerClient(running, 'plain', { application_type: 'native', redirect_uris: ['https://app.rp.example/cb', 'https://app.rp.example/other'] });
    expect(await subAt(app.metadata, 'https://app.rp.example/other')).toBe(pairwiseSubOf('https://app.rp.example/cb'));
  });
});
