import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { redirectParams, runCodeFlow, userData } from '../helpers/flow.js';
import { registerClient, registeredClientUrl, type RegisteredClient } from '../helpers/clients.js';

const IDCARD = { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', nationality: 'DE', verified_at: '2025-03-01T10:15:00Z' };
const EMAIL_ERIKA = { email: 'erika.mustermann@example.com', verified_at: '2025-03-01T10:20:00Z' };
const EMAIL_MAX = { email: 'max.mustermann@example.com', verified_at: '2025-04-10T12:00:00Z' };

/** The examples the contract (C5) and the seed spec (4.5) write out, each run as written through a real flow. */
describe('the written examples of C5 and the seed spec, as written', () => {
  let running: RunningApp;
  let rsa: RegisteredClient;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  it.each([
    ['svc.ver.[mobile,email].l2', 'demo', { 'svc.ver.email.l2': EMAIL_ERIKA }],
    ['svc.ver.[mobile,email].l2', 'demo-basic', { 'svc.ver.email.l2': EMAIL_MAX }],
    ['svc.ver.idcard.[l2,l3].[nfc,video]', 'demo', { 'svc.ver.idcard.l3.nfc': IDCARD }],
    ['svc.ver.[idcard.l3.nfc,driverslicense.l2]', 'demo', { 'svc.ver.idcard.l3.nfc': IDCARD }],
    ['svc.ver.[idcard.[l2,l3],email.l2]', 'demo', { 'svc.ver.email.l2': EMAIL_ERIKA }],
    ['svc.ver.[idcard.[l2,l3],email.l2]', 'demo-basic', { 'svc.ver.email.l2': EMAIL_MAX }],
  ])('delivers %s for %s under the first satisfied concrete name', async (name, login, expected) => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, {
      login,
      password: login,
      configure: rsa.configure,
      params: { claims: JSON.stringify({ userinfo: { [name]: { essential: true } } }) },
    });
    expect(userData(flow.userinfo)).toEqual(expected);
  });

  it('serves the seed sample scope "openid oidc", leaving out the scope it does not know', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { configure: rsa.configure, scope: 'openid oidc' });
    expect(flow.claims.scope).toBe('openid');
    expect(userData(flow.claims)).toEqual({});
  });

  it('refuses the seed sample response_type "id_token token" with unsupported_response_type (C12 2), redirected with state', async () => {
    const location = (await fetch(registeredClientUrl(running.issuer, rsa, { response_type: 'id_token token', nonce: 'n' }), { redirect: 'manual' })).headers.get('location');
    const params = redirectParams(location as string);
    expect([params.get('error'), params.get('state')]).toEqual(['unsupported_response_type', 'st']);
  });
});
