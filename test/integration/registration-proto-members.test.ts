import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { createStore, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { encryptionKey, isUnspent, manage, register } from '../helpers/registration.js';

/*
 * oidc-provider copies a registration body onto the client's metadata with Object.assign: a top-level "__proto__"
 * member becomes the prototype of what the registration policies judge, while the stored client keeps its own members
 * only. Nested deeper, one copy loop away from the same. A JSON body with such a member, in any spelling, is refused.
 */

const R = '["https://rp.example/cb"]';
const REFUSED = { status: 400, error: 'invalid_request', error_description: 'a JSON body may not hold a member named "__proto__"' };

describe('a registration or update whose JSON body holds a "__proto__" member', () => {
  let running: RunningApp;
  let store: CountingStore;
  let key: string;

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    running = await startApp({ store });
    key = JSON.stringify((await encryptionKey('RSA-OAEP-256')).jwk);
  });

  afterAll(async () => {
    await running.close();
  });

  /** Bodies with `$KEY` where the test's public key goes. */
  const BODIES: [string, string][] = [
    ['at the top level, lending allow_unencrypted_userinfo the policies would read', `{"redirect_uris":${R},"__proto__":{"allow_unencrypted_userinfo":true}}`],
    ['at the top level, lending the encryption and keys the policies would vet', `{"redirect_uris":${R},"__proto__":{"userinfo_encrypted_response_alg":"RSA-OAEP-256","jwks":{"keys":[$KEY]}}}`],
    ['at the top level, spelled with JSON escapes', `{"redirect_uris":${R},"\\u005f\\u005fproto\\u005f\\u005f":{"allow_unencrypted_userinfo":true}}`],
    ['in jwks, lending it its keys', `{"redirect_uris":${R},"userinfo_encrypted_response_alg":"RSA-OAEP-256","jwks":{"keys":[$KEY],"__proto__":{"keys":[]}}}`],
    ['in a key of jwks, holding a private member', `{"redirect_uris":${R},"userinfo_encrypted_response_alg":"RSA-OAEP-256","jwks":{"keys":[$PRIVATE]}}`],
    ['in an array of metadata', `{"redirect_uris":${R},"contacts":[{"__proto__":{}}]}`],
  ];

  const filled = (body: string): string => body.replace('$KEY', key).replace('$PRIVATE', key.replace(/}$/, ',"__proto__":{"d":"AAAA"}}'));

  it.each(BODIES)('attack: a registration with it %s is refused, nothing stored, the initial access token unspent', async (_name, body) => {
    const token = (await issueInitialAccessToken(running.app.svc.provider)).token;
    const before = { clients: store.writes('Client'), rats: store.writes('RegistrationAccessToken') };
    const res = await register(running, filled(body), token);
    expect({ status: res.status, ...res.body }).toEqual(REFUSED);
    expect({ clients: store.writes('Client'), rats: store.writes('RegistrationAccessToken') }).toEqual(before);
    expect(await isUnspent(running, token)).toBe(true);
  });

  it.each(BODIES.flatMap(([name, body]) => (['PUT', 'POST'] as const).map((method) => [method, name, body] as const)))(
    'attack: an update by %s with it %s is refused, the client unchanged, its registration access token still good',
    async (method, _name, body) => {
      const registered = await register(running, { redirect_uris: ['https://rp.example/cb'], client_name: 'before' }, (await issueInitialAccessToken(running.app.svc.provider)).token);
      const [uri, clientId, token] = [String(registered.body.registration_client_uri), String(registered.body.client_id), String(registered.body.registration_access_token)];
      const stored = await running.app.svc.store.adapter('Client').find(clientId);
      const res = await fetch(uri, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: filled(body).replace('{', `{"client_id":"${clientId}",`) });
      expect({ status: res.status, ...((await res.json()) as object) }).toEqual(REFUSED);
      expect(await running.app.svc.store.adapter('Client').find(clientId)).toEqual(stored);
      const read = await manage(uri, 'GET', token);
      expect([read.status, read.body.client_name]).toEqual([200, 'before']);
    },
  );

  it('honest: members named like it ("proto", "__proto", "_proto_", "prototype", "constructor") and the text "__proto__" as a value register; only metadata is stored', async () => {
    const body = `{"redirect_uris":${R},"client_name":"__proto__","proto":1,"__proto":{"a":1},"_proto_":2,"prototype":{"allow_unencrypted_userinfo":true},"constructor":{"allow_unencrypted_userinfo":true}}`;
    const res = await register(running, body, (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect([res.status, res.body.client_name, res.body.allow_unencrypted_userinfo]).toEqual([201, '__proto__', false]);
    const stored = (await running.app.svc.store.adapter('Client').find(String(res.body.client_id))) as Record<string, unknown>;
    expect(['proto', '__proto', '_proto_', 'prototype', 'constructor'].filter((name) => Object.hasOwn(stored, name))).toEqual([]);
    expect(stored.allow_unencrypted_userinfo).toBe(false);
  });

  it('honest: a key published as usual registers with its jwks', async () => {
    const jwk = JSON.parse(key) as JWK;
    const res = await register(running, { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [jwk] } }, (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect([res.status, (res.body.jwks as { keys: JWK[] }).keys[0]?.kid]).toEqual([201, jwk.kid]);
  });
});
