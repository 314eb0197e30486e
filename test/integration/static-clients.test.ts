import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, pkcePair } from '../helpers/flow.js';

describe('statically provisioned clients (svc.clients.file)', () => {
  let running: RunningApp;

  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-clients-')), 'clients.json');
    writeFileSync(
      file,
      JSON.stringify([
        { client_id: 'from-file', client_secret: 'x'.repeat(40), redirect_uris: ['https://rp.example/cb'] },
        { client_id: 'acr-from-file', client_secret: 'x'.repeat(40), redirect_uris: ['https://rp.example/cb'], default_acr_values: ['urn:mace:incommon:iap:silver'] },
        { client_id: 'scope-from-file', client_secret: 'x'.repeat(40), redirect_uris: ['https://rp.example/cb'], scope: 'openid offline_access' },
      ]),
    );
    running = await startApp({ properties: { 'svc.clients.file': file } });
  });
  afterAll(async () => running.close());

  it.each([
    ['a client from the file', 'from-file'],
    ['a client from the file that names default_acr_values (ignored, as acr_values is), not an invalid_client_metadata page', 'acr-from-file'],
    ['a client from the file whose scope names offline_access (held without it, as a request naming it is served: C5)', 'scope-from-file'],
  ])('serves authorization requests of %s', async (_case, clientId) => {
    const { challenge } = pkcePair();
    const response = await fetch(
      authorizationUrl(running.issuer, {
        client_id: clientId,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: 'https://rp.example/cb',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      { redirect: 'manual' },
    );
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toMatch(/^\/oidc\/v1\/interaction\//);
  });

  it('attack: a static client oidc-provider would refuse (a response type it does not offer) stops the start naming it, instead of an error page at every authorization', async () => {
    const hybrid = { client_id: 'hybrid-rp', client_secret: 'x'.repeat(40), redirect_uris: ['https://rp.example/cb'], response_types: ['code' as const, 'code id_token' as const] };
    await expect(startApp({ clients: [hybrid] })).rejects.toThrow(/^static client "hybrid-rp": response_types /);
  });

  it('attack: a static client asking for a grant not offered stops the start naming the grant', async () => {
    const refreshing = { client_id: 'refresh-rp', client_secret: 'x'.repeat(40), redirect_uris: ['https://rp.example/cb'], grant_types: ['authorization_code', 'refresh_token'] };
    await expect(startApp({ clients: [refreshing] })).rejects.toThrow(/^options\.clients: client "refresh-rp": grant_types: "refresh_token" is not offered/);
  });

  it('attack: a static client of a provider served over https with an http redirect URI off the loopback stops the start naming it', async () => {
    const clear = { client_id: 'clear-rp', client_secret: 'x'.repeat(40), redirect_uris: ['http://rp.example/cb'] };
    await expect(startApp({ clients: [clear], publicScheme: 'https' })).rejects.toThrow(/^options\.clients: client "clear-rp": redirect_uris\[0\] is http on a host other than loopback/);
  });

  it('honest: the same client starts on a provider served over http for development, and an https provider starts with a loopback one', async () => {
    const clear = { client_id: 'clear-rp', client_secret: 'x'.repeat(40), redirect_uris: ['http://rp.example/cb'] };
    const local = { client_id: 'local-rp', client_secret: 'x'.repeat(40), redirect_uris: ['http://127.0.0.1:8080/cb'] };
    for (const started of [await startApp({ clients: [clear] }), await startApp({ clients: [local], publicScheme: 'https' })]) await started.close();
  });

  it('honest: a static client whose sector_identifier_uri cannot be fetched at start does not stop it (its document is fetched at first use)', async () => {
    const grouped: ClientMetadata = { client_id: 'sector-rp', client_secret: 'x'.repeat(40), redirect_uris: ['https://a.rp.example/cb', 'https://b.rp.example/cb'], subject_type: 'pairwise', sector_identifier_uri: 'https://sector.invalid/uris.json' };
    const started = await startApp({ clients: [grouped] });
    await started.close();
  });

  it('answers an unknown client with an error page, not a redirect', async () => {
    const response = await fetch(
      authorizationUrl(running.issuer, { client_id: 'nobody', response_type: 'code', scope: 'openid', redirect_uri: 'https://rp.example/cb' }),
      { redirect: 'manual' },
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('<code>invalid_client</code>');
  });
});
