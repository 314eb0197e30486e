import { describe, expect, it } from '@jest/globals';

import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { pairwiseSubOf } from '../helpers/app.js';
import { registerClient, updateRegistration } from '../helpers/clients.js';
import { runCodeFlow } from '../helpers/flow.js';
import { appPerSuite } from '../helpers/suite-app.js';

describe('pairwise subjects of native apps that redirect to a private-use URI scheme (C12.12, RFC 8252 7.1)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });
  const nativeApp = (redirect: string) => registerClient(running, 'plain', { redirect_uris: [redirect], application_type: 'native' });
  const subOf = async (client: ClientMetadata): Promise<string> => (await runCodeFlow(running.issuer, client, { skipUserinfo: true })).claims.sub;

  it('attack: two unrelated apps whose private-use redirect URIs share an authority (`://callback`) get unrelated subs for one person', async () => {
    const alpha = await nativeApp('com.alpha.app://callback');
    const beta = await nativeApp('org.beta.mail://callback/oauth');
    expect([alpha.metadata.subject_type, beta.metadata.subject_type]).toEqual(['pairwise', 'pairwise']);
    expect(await subOf(beta.metadata)).not.toBe(await subOf(alpha.metadata));
  });

  it('attack: an app that registers another app\'s private-use scheme (no one owns a scheme) does not get that app\'s subs', async () => {
    const victim = await nativeApp('com.victim.bank:/oauth2redirect');
    const copycat = await nativeApp('com.victim.bank:/elsewhere');
    expect(await subOf(copycat.metadata)).not.toBe(await subOf(victim.metadata));
  });

  it('honest: one app keeps its sub across sign-ins and an update of its registration', async () => {
    const app = await nativeApp('com.example.notes:/cb');
    const first = await subOf(app.metadata);
    expect(first).not.toBe('demo-0001');
    expect(await subOf(app.metadata)).toBe(first);
    const updated = await updateRegistration(app, { client_name: 'renamed', redirect_uris: ['com.example.notes:/cb', 'com.example.notes:/other'] });
    expect(updated.metadata.subject_type).toBe('pairwise');
    expect(await subOf(updated.metadata)).toBe(first);
  });

  it('honest: a native app on a claimed https URI keeps its host as its sector', async () => {
    const claimed = await nativeApp('https://app.rp.example/cb');
    expect(await subOf(claimed.metadata)).toBe(pairwiseSubOf('https://app.rp.example/cb'));
  });
});
