import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { decodeProtectedHeader, type JWK } from 'jose';

import { generateSigningKeys, validateProviderKeys } from '../../lib/provider/keys.js';
import { signingKids, type StatefulJwk } from '../../lib/provider/key-states.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { PROCESS_MS } from '../helpers/processes.js';

jest.setTimeout(PROCESS_MS);

/*
 * oidc-provider gives a key labelled only with a signing alg (`"alg": "RS256"`, no `use`) the use "sig" when it loads
 * it, and so prefers it over a current key that names its use alone: the keys check must judge it the same way.
 */
const client = { client_id: 'rp', client_secret: 'a-client-secret-that-is-long-enough-for-the-rules-000', redirect_uris: ['https://rp.example/cb'] };
const T0 = 1_800_000_000;

async function pair(): Promise<{ current: [JWK, JWK]; other: JWK }> {
  const current = (await generateSigningKeys()).keys as [JWK, JWK];
  const [other] = (await generateSigningKeys()).keys as [JWK];
  return { current, other };
}
const withoutUse = ({ use: _use, ...key }: JWK): JWK => key;

describe('which provider key signs, as oidc-provider picks it', () => {
  const running: RunningApp[] = [];
  afterAll(async () => Promise.all(running.map(async (r) => r.close())));

  it('attack: a next RSA key labelled "alg": "RS256" without use, beside a current key with "use": "sig", is refused (oidc-provider would sign with it at once)', async () => {
    const { current, other } = await pair();
    const keys: StatefulJwk[] = [...current, { ...withoutUse(other), alg: 'RS256', svc_state: 'next', svc_since: T0 }];
    expect(() => validateProviderKeys({ keys }, 'keys.json')).toThrow(`the next key ${String(other.kid)} would sign RS256 before every current key`);
    const retiring: StatefulJwk[] = [...current, { ...withoutUse(other), alg: 'RS256', svc_state: 'retiring', svc_since: T0 }];
    expect(() => validateProviderKeys({ keys: retiring }, 'keys.json')).toThrow(`the retiring key ${String(other.kid)} would sign RS256 before every current key`);
  });

  it('honest: a current key labelled "alg": "RS256" without use beside a next key with use and alg signs, as the check and the logs say', async () => {
    const { current, other } = await pair();
    const rsa = { ...withoutUse(current[0]), alg: 'RS256' };
    const { keys } = validateProviderKeys({ keys: [rsa, current[1], { ...other, alg: 'RS256', svc_state: 'next', svc_since: T0 }] }, 'keys.json');
    expect(signingKids(keys).RS256).toBe(rsa.kid);
    const app = await startApp({ jwks: { keys }, clients: [client] });
    running.push(app);
    const { tokens } = await runCodeFlow(app.issuer, client, { skipUserinfo: true });
    expect(decodeProtectedHeader(String(tokens.id_token)).kid).toBe(rsa.kid);
  });
});
