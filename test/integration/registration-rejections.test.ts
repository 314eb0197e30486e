import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { createStore, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { encryptionKey, isUnspent, makeCertificateChain, register, startDocServer, type CertificateChain, type DocServer } from '../helpers/registration.js';

const R = ['https://rp.example/cb'];

/** Shared material the cases build their bodies from. */
interface Material {
  rsa: JWK;
  rsa1024: JWK;
  ec: JWK;
  chain: CertificateChain;
  docs: string;
}

interface RejectionCase {
  name: string;
  /** The registration body (a string is sent raw). */
  body: (m: Material) => unknown;
  /** Which app: `open` allows private-network fetches (the test's doc server), `strict` does not. */
  app?: 'open' | 'strict';
  /** Doc server route the case uses. */
  serve?: [path: string, handler: (req: IncomingMessage, res: ServerResponse) => void];
  error: string;
  /** What the description must name. */
  names: string;
}

const enc = (field: string, alg: unknown, extra: (m: Material) => Record<string, unknown> = (m) => ({ jwks: { keys: [m.rsa] } })): RejectionCase => ({
  name: `${field} ${JSON.stringify(alg)}`,
  body: (m) => ({ redirect_uris: R, [field]: alg, ...extra(m) }),
  error: 'invalid_client_metadata',
  names: field,
});

const keys = (name: string, alg: string, jwks: (m: Material) => unknown, names = 'jwks'): RejectionCase => ({
  name,
  body: (m) => ({ redirect_uris: R, userinfo_encrypted_response_alg: alg, jwks: jwks(m) }),
  error: 'invalid_client_metadata',
  names,
});

const jwksUri = (name: string, url: (m: Material) => string, app: 'open' | 'strict', serve?: RejectionCase['serve']): RejectionCase => ({
  name,
  app,
  serve,
  body: (m) => ({ redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: url(m) }),
  error: 'invalid_client_metadata',
  names: 'jwks_uri',
});

const json = (res: ServerResponse, body: unknown): void => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
};

const CASES: RejectionCase[] = [
  // Malformed requests and redirect URIs
  { name: 'malformed JSON', body: () => '{"redirect_uris": [', error: 'invalid_request', names: 'parse' },
  { name: 'a JSON array body', body: () => '[]', error: 'invalid_request', names: 'JSON object' },
  { name: 'no redirect_uris', body: () => ({ client_name: 'x' }), error: 'invalid_redirect_uri', names: 'redirect_uris' },
  { name: 'empty redirect_uris', body: () => ({ redirect_uris: [] }), error: 'invalid_redirect_uri', names: 'redirect_uris' },
  { name: 'redirect_uris not an array', body: () => ({ redirect_uris: 'https://rp.example/cb' }), error: 'invalid_redirect_uri', names: 'redirect_uris' },
  { name: 'a fragment in a redirect URI', body: () => ({ redirect_uris: ['https://rp.example/cb#frag'] }), error: 'invalid_redirect_uri', names: 'redirect_uris' },
  { name: 'a relative redirect URI', body: () => ({ redirect_uris: ['/cb'] }), error: 'invalid_redirect_uri', names: 'redirect_uris' },
  // A browser reads `\` as `/` and drops tabs: the host it goes to is not the host an RFC 3986 parser sees.
  { name: 'a backslash before user information in a redirect URI', body: () => ({ redirect_uris: ['https://rp.example\\@evil.example/cb'] }), error: 'invalid_redirect_uri', names: 'redirect_uris[0]' },
  { name: 'user information in a redirect URI', body: () => ({ redirect_uris: [R[0], 'https://rp.example@evil.example/cb'] }), error: 'invalid_redirect_uri', names: 'redirect_uris[1]' },
  { name: 'empty user information in a redirect URI', body: () => ({ redirect_uris: ['https://@rp.example/cb'] }), error: 'invalid_redirect_uri', names: 'redirect_uris[0]' },
  { name: 'a tab in a redirect URI host', body: () => ({ redirect_uris: ['https://rp.exa\tmple/cb'] }), error: 'invalid_redirect_uri', names: 'redirect_uris[0]' },
  // Half of a surrogate pair is no character: no browser can send it back, and parsers replace it differently.
  { name: 'a lone surrogate in a redirect URI', body: () => ({ redirect_uris: ['https://rp.example/cb\ud800'] }), error: 'invalid_redirect_uri', names: 'redirect_uris[0] holds half of a surrogate pair' },
  { name: 'a lone surrogate in a post-logout redirect URI', body: () => ({ redirect_uris: R, post_logout_redirect_uris: ['https://rp.example/bye?x=\udfff'] }), error: 'invalid_client_metadata', names: 'post_logout_redirect_uris[0] holds half of a surrogate pair' },
  { name: 'a backslash in a native app redirect URI', body: () => ({ application_type: 'native', redirect_uris: ['com.example.app:/cb\\x'] }), error: 'invalid_redirect_uri', names: 'redirect_uris[0]' },
  // The host becomes a CSP source on the sign-in and sign-out pages: `*` would let their forms post anywhere.
  { name: 'a wildcard host in a post-logout redirect URI', body: () => ({ redirect_uris: R, post_logout_redirect_uris: ['https://*/bye'] }), error: 'invalid_client_metadata', names: 'post_logout_redirect_uris[0]' },
  // A provider served over https sends codes over https, or to the loopback interface (RFC 8252 7.3).
  ...['http://rp.example/cb', 'http://10.0.0.1/cb', 'http://localhost.rp.example/cb', 'http://127.0.0.1.nip.io/cb', 'HTTP://RP.EXAMPLE/cb'].map((uri): RejectionCase => ({
    name: `an http redirect URI off the loopback interface of an https provider (${uri})`,
    app: 'strict',
    body: () => ({ redirect_uris: ['https://rp.example/cb', uri] }),
    error: 'invalid_redirect_uri',
    names: 'redirect_uris[1] is http on a host other than loopback',
  })),
  { name: 'a wildcard host in a redirect URI', body: () => ({ redirect_uris: ['https://*.example/cb'] }), error: 'invalid_redirect_uri', names: 'redirect_uris[0]' },
  { name: 'a semicolon in a post-logout redirect URI host', body: () => ({ redirect_uris: R, post_logout_redirect_uris: ['https://rp.example;sandbox/bye'] }), error: 'invalid_client_metadata', names: 'post_logout_redirect_uris[0]' },
  { name: 'user information in a post-logout redirect URI', body: () => ({ redirect_uris: R, post_logout_redirect_uris: ['https://rp.example:pw@evil.example/bye'] }), error: 'invalid_client_metadata', names: 'post_logout_redirect_uris[0]' },
  { name: 'response_types code id_token', body: () => ({ redirect_uris: R, response_types: ['code id_token'] }), error: 'invalid_client_metadata', names: 'response_types' },
  { name: 'response_types empty', body: () => ({ redirect_uris: R, response_types: [] }), error: 'invalid_client_metadata', names: 'response_types: must include code' },
  { name: 'grant_types empty', body: () => ({ redirect_uris: R, grant_types: [] }), error: 'invalid_client_metadata', names: 'grant_types: must include authorization_code' },
  { name: 'grant_types implicit', body: () => ({ redirect_uris: R, grant_types: ['implicit'] }), error: 'invalid_client_metadata', names: 'grant_types' },
  { name: 'grant_types refresh_token', body: () => ({ redirect_uris: R, grant_types: ['authorization_code', 'refresh_token'] }), error: 'invalid_client_metadata', names: 'grant_types' },
  // oidc-provider's own check of a device_code grant would name jwks_uri.
  { name: 'grant_types device_code', body: () => ({ redirect_uris: R, grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'] }), error: 'invalid_client_metadata', names: 'grant_types: "urn:ietf:params:oauth:grant-type:device_code" is not offered' },
  { name: 'grant_types client_credentials', body: () => ({ redirect_uris: R, grant_types: ['client_credentials'] }), error: 'invalid_client_metadata', names: 'grant_types' },
  { name: 'token_endpoint_auth_method client_secret_jwt', body: () => ({ redirect_uris: R, token_endpoint_auth_method: 'client_secret_jwt' }), error: 'invalid_client_metadata', names: 'token_endpoint_auth_method' },
  // Accepted and dropped when well formed (acr is never issued); anything else is not metadata of OpenID Connect Registration 2.
  { name: 'default_acr_values as a string', body: () => ({ redirect_uris: R, default_acr_values: 'urn:mace:incommon:iap:silver' }), error: 'invalid_client_metadata', names: 'default_acr_values' },
  { name: 'default_acr_values holding a number', body: () => ({ redirect_uris: R, default_acr_values: ['urn:mace:incommon:iap:silver', 1] }), error: 'invalid_client_metadata', names: 'default_acr_values' },
  // address, phone and offline_access are dropped (C5); what is left must name openid, spelled exactly.
  { name: 'a scope without openid', body: () => ({ redirect_uris: R, scope: 'email profile' }), error: 'invalid_client_metadata', names: 'scope' },
  { name: 'a scope of offline_access alone', body: () => ({ redirect_uris: R, scope: 'offline_access' }), error: 'invalid_client_metadata', names: 'scope' },
  { name: 'a scope with OPENID in capitals', body: () => ({ redirect_uris: R, scope: 'OPENID email' }), error: 'invalid_client_metadata', names: 'scope' },
  { name: 'a scope separated by a tab', body: () => ({ redirect_uris: R, scope: 'openid\toffline_access' }), error: 'invalid_client_metadata', names: 'scope' },
  { name: 'a scope as an array', body: () => ({ redirect_uris: R, scope: ['openid'] }), error: 'invalid_client_metadata', names: 'scope' },
  { name: 'allow_unencrypted_userinfo "yes"', body: () => ({ redirect_uris: R, allow_unencrypted_userinfo: 'yes' }), error: 'invalid_client_metadata', names: 'allow_unencrypted_userinfo' },

  // Algorithms: symmetric, none, RSA1_5, PBES2, not RFC 7518, not offered
  ...['A128KW', 'A192KW', 'A256KW', 'dir', 'A128GCMKW', 'A256GCMKW', 'PBES2-HS256+A128KW', 'PBES2-HS512+A256KW', 'RSA1_5', 'RSA-OAEP-384', 'none', 'FOO-BAR', 'rsa-oaep-256', 42].flatMap(
    (alg) => [enc('userinfo_encrypted_response_alg', alg), enc('id_token_encrypted_response_alg', alg)],
  ),
  enc('request_object_encryption_alg', 'dir'),
  enc('id_token_signed_response_alg', 'HS256', () => ({})),
  enc('id_token_signed_response_alg', 'none', () => ({})),
  enc('id_token_signed_response_alg', 'RS384', () => ({})),
  enc('id_token_signed_response_alg', 'EdDSA', () => ({})),
  enc('userinfo_signed_response_alg', 'HS512', () => ({})),
  enc('request_object_signing_alg', 'none', () => ({})),
  enc('token_endpoint_auth_signing_alg', 'HS256', () => ({})),
  enc('id_token_encrypted_response_enc', 'A192GCM', (m) => ({ id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [m.rsa] } })),
  enc('userinfo_encrypted_response_enc', 'A128CBC', (m) => ({ userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [m.rsa] } })),
  enc('userinfo_encrypted_response_enc', 'A128GCM', () => ({})),

  // Keys
  { name: 'encryption requested without keys', body: () => ({ redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256' }), error: 'invalid_client_metadata', names: 'jwks' },
  { name: 'ID token encryption requested without keys', body: () => ({ redirect_uris: R, id_token_encrypted_response_alg: 'ECDH-ES' }), error: 'invalid_client_metadata', names: 'jwks' },
  keys('only use=sig keys', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.rsa, use: 'sig' }] })),
  keys('keys with neither use nor key_ops', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.rsa, use: undefined }] })),
  keys('key_ops verify only', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.rsa, use: undefined, key_ops: ['verify'] }] })),
  keys('an RSA 1024 key', 'RSA-OAEP-256', (m) => ({ keys: [m.rsa1024] })),
  keys('an EC key for RSA-OAEP-256', 'RSA-OAEP-256', (m) => ({ keys: [m.ec] })),
  keys('an RSA key for ECDH-ES+A256KW', 'ECDH-ES+A256KW', (m) => ({ keys: [m.rsa] })),
  keys('a secp256k1 key for ECDH-ES', 'ECDH-ES', (m) => ({ keys: [{ ...m.ec, crv: 'secp256k1' }] })),
  keys('an Ed25519 key for ECDH-ES', 'ECDH-ES', () => ({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', use: 'enc' }] })),
  keys('a key whose alg is RSA-OAEP, asked RSA-OAEP-256', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.rsa, alg: 'RSA-OAEP' }] })),
  keys('an empty key set', 'RSA-OAEP-256', () => ({ keys: [] })),
  keys('private key material', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.rsa, d: 'AAAA' }] })),
  keys('a symmetric oct key', 'RSA-OAEP-256', () => ({ keys: [{ kty: 'oct', k: 'AAAA', use: 'enc' }] })),
  keys('jwks as a string', 'RSA-OAEP-256', () => 'keys'),
  keys('jwks without keys', 'RSA-OAEP-256', () => ({ set: [] })),
  keys('a key without kty', 'RSA-OAEP-256', (m) => ({ keys: [{ n: m.rsa.n, e: 'AQAB', use: 'enc' }] })),
  {
    name: 'jwks and jwks_uri together',
    body: (m) => ({ redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [m.rsa] }, jwks_uri: `${m.docs}/jwks-ok` }),
    error: 'invalid_client_metadata',
    names: 'jwks',
  },

  // Certificates
  keys('x5c of another key', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.rsa, x5c: m.chain.x5c }] }), 'x5c'),
  keys('x5c not base64', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5c: ['***'] }] }), 'x5c[0]'),
  keys('x5c not DER', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5c: ['AAAA'] }] }), 'x5c[0]'),
  keys('x5c chain out of order', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5c: [...m.chain.x5c].reverse() }] }), 'x5c'),
  keys('x5c leaf not issued by the next certificate', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5c: [m.chain.x5c[0], new X509Certificate(m.chain.otherPem).raw.toString('base64')] }] }), 'x5c'),
  keys('x5c empty', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5c: [] }] }), 'x5c'),
  keys('a wrong x5t', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5c: m.chain.x5c, x5t: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA' }] }), 'x5t'),
  keys('a wrong x5t#S256', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5c: m.chain.x5c, 'x5t#S256': 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }] }), 'x5t#S256'),
  keys('x5t without a certificate', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.rsa, x5t: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA' }] }), 'x5t'),
  {
    ...keys('x5u unreachable', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5u: 'http://127.0.0.1:1/chain.pem' }] }), 'x5u http://127.0.0.1:1/chain.pem'),
    app: 'open',
  },
  {
    ...keys('x5u on a private address', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5u: 'https://192.168.1.1/chain.pem' }] }), 'x5u https://192.168.1.1/chain.pem'),
    app: 'strict',
  },
  {
    ...keys('x5u over http', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5u: 'http://rp.example/chain.pem' }] }), 'must use https'),
    app: 'strict',
  },
  {
    ...keys('x5u that is not PEM', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5u: `${m.docs}/not-pem` }] }), 'x5u'),
    app: 'open',
    serve: ['/not-pem', (_q, s) => s.end('hello')],
  },
  {
    ...keys('x5u of another key', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5u: `${m.docs}/other.pem` }] }), 'x5u'),
    app: 'open',
  },

  // jwks_uri
  jwksUri('jwks_uri unreachable', () => 'http://127.0.0.1:1/jwks', 'open'),
  jwksUri('jwks_uri on 127.0.0.1', () => 'https://127.0.0.1/jwks', 'strict'),
  jwksUri('jwks_uri on [::1]', () => 'https://[::1]/jwks', 'strict'),
  jwksUri('jwks_uri on 10.0.0.1', () => 'https://10.0.0.1/jwks', 'strict'),
  jwksUri('jwks_uri on 172.16.0.1', () => 'https://172.16.0.1/jwks', 'strict'),
  jwksUri('jwks_uri on 192.168.1.1', () => 'https://192.168.1.1/jwks', 'strict'),
  jwksUri('jwks_uri on the metadata address', () => 'https://169.254.169.254/latest/meta-data', 'strict'),
  jwksUri('jwks_uri on a name resolving to loopback', () => 'https://localhost/jwks', 'strict'),
  jwksUri('jwks_uri over http', () => 'http://rp.example/jwks', 'strict'),
  jwksUri('jwks_uri answering 404', (m) => `${m.docs}/missing`, 'open', ['/missing', (_q, s) => { s.statusCode = 404; s.end(); }]),
  jwksUri('jwks_uri answering non-JSON', (m) => `${m.docs}/html`, 'open', ['/html', (_q, s) => s.end('<html></html>')]),
  jwksUri('jwks_uri answering JSON without keys', (m) => `${m.docs}/nokeys`, 'open', ['/nokeys', (_q, s) => json(s, { hello: 1 })]),
  jwksUri('jwks_uri with signature keys only', (m) => `${m.docs}/sigonly`, 'open', ['/sigonly', (_q, s) => json(s, { keys: [{ kty: 'RSA', use: 'sig', e: 'AQAB', n: 'x'.repeat(342) }] })]),
  jwksUri('jwks_uri larger than 512 KiB', (m) => `${m.docs}/huge`, 'open', ['/huge', (_q, s) => json(s, { keys: [], pad: 'x'.repeat(600 * 1024) })]),
  jwksUri('jwks_uri redirecting to another host', (m) => `${m.docs}/redirect`, 'open', [
    '/redirect',
    (q, s) => {
      s.statusCode = 302;
      s.setHeader('location', `http://localhost:${String(q.socket.localPort)}/jwks-ok`);
      s.end();
    },
  ]),
  jwksUri('jwks_uri redirecting to a Location that is no URL', (m) => `${m.docs}/bad-location`, 'open', [
    '/bad-location',
    (_q, s) => {
      s.statusCode = 302;
      s.setHeader('location', 'http://[::1');
      s.end();
    },
  ]),
  { ...keys('x5u redirecting to a Location that is no URL', 'RSA-OAEP-256', (m) => ({ keys: [{ ...m.chain.jwk, x5u: `${m.docs}/bad-location` }] }), 'x5u http://'), app: 'open' },
  jwksUri('jwks_uri too slow (over 5 s)', (m) => `${m.docs}/slow`, 'open', ['/slow', () => undefined]),
];

/**
 * The rejection messages docs/registration.md quotes ("Rejections and their messages"), by the case
 * that produces each: every quoted example is produced by a case (the case asserts it), and every
 * example claimed here is quoted there. In an example, `…` stands for any text and `("k1")` for
 * any key id.
 */
const DOCUMENTED: Record<string, string> = {
  'encryption requested without keys': "jwks: userinfo_encrypted_response_alg needs the client's public keys: register jwks or jwks_uri",
  'only use=sig keys': 'jwks: no key usable for userinfo_encrypted_response_alg RSA-OAEP-256 (keys need use=enc or key_ops containing encrypt); key #1 ("k1"): not an encryption key (needs use=enc or key_ops containing encrypt)',
  'an RSA 1024 key': 'jwks: key #1 ("k1"): RSA modulus of 1024 bits, at least 2048 needed',
  'an EC key for RSA-OAEP-256': '…; key #1 ("k1"): EC key, but RSA-OAEP-256 needs RSA',
  'a key whose alg is RSA-OAEP, asked RSA-OAEP-256': '…; key #1 ("k1"): its alg is RSA-OAEP',
  'userinfo_encrypted_response_alg "A128KW"': 'userinfo_encrypted_response_alg: symmetric algorithm A128KW is not supported',
  'id_token_encrypted_response_alg "RSA1_5"': 'id_token_encrypted_response_alg: RSA1_5 is not supported (padding-oracle prone); use RSA-OAEP-256',
  'id_token_signed_response_alg "HS256"': 'id_token_signed_response_alg: symmetric algorithm HS256 is not supported',
  'id_token_signed_response_alg "none"': 'id_token_signed_response_alg: none is never supported',
  'userinfo_encrypted_response_alg "RSA-OAEP-384"': 'userinfo_encrypted_response_alg: RSA-OAEP-384 is not an RFC 7518 algorithm',
  'id_token_signed_response_alg "RS384"': 'id_token_signed_response_alg: RS384 is not offered; use one of RS256, PS256, ES256',
  'userinfo_encrypted_response_enc "A128GCM"': 'userinfo_encrypted_response_enc: requires userinfo_encrypted_response_alg',
  'private key material': 'jwks: key #1 ("k1") contains private key material; register public keys only',
  'x5c of another key': 'jwks: key #1 ("k1"): the x5c leaf certificate\'s public key differs from the JWK',
  'x5c leaf not issued by the next certificate': 'jwks: key #1 ("k1"): x5c certificate #1 is not issued and signed by certificate #2',
  'a wrong x5t': 'jwks: key #1 ("k1"): x5t does not match the SHA-1 thumbprint of the leaf certificate',
  'x5u unreachable': 'jwks: key #1 ("k1"): x5u http://…/chain.pem: could not be fetched (ECONNREFUSED)',
  'jwks_uri on 10.0.0.1': 'jwks_uri: https://10.0.0.1/jwks: resolves to a loopback, private, link-local or reserved address',
  'jwks_uri over http': 'jwks_uri: http://rp.example/jwks: must use https',
  'jwks_uri larger than 512 KiB': 'jwks_uri: …: response larger than 524288 bytes',
  // The fetch's own 5 s and the request's shared 5 s budget end together: either words it.
  'jwks_uri too slow (over 5 s)': 'jwks_uri: …: timed out…',
  'jwks_uri redirecting to another host': 'jwks_uri: …: redirects to another host (…)',
  'jwks_uri redirecting to a Location that is no URL': 'jwks_uri: …: redirects to a Location that is no URL',
  'grant_types empty': 'grant_types: must include authorization_code, the only grant',
  'response_types empty': 'response_types: must include code, the only response type',
  'grant_types device_code': 'grant_types: "urn:ietf:params:oauth:grant-type:device_code" is not offered: authorization_code is the only grant (no refresh tokens: C3)',
  'a fragment in a redirect URI': 'redirect_uris must not contain fragments',
  'a backslash before user information in a redirect URI': 'redirect_uris[0] holds a backslash; write the URI as a browser shows it',
  'an http redirect URI off the loopback interface of an https provider (http://rp.example/cb)':
    'redirect_uris[1] is http on a host other than loopback: the code would cross the network in clear; use https (http is for the loopback interface)',
};

/** The examples quoted in the second column of docs/registration.md's table of rejections. */
function quotedExamples(): string[] {
  const section = readFileSync('docs/registration.md', 'utf8').split('\n## Rejections and their messages\n')[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Request'))
    .flatMap((line) => [...(line.split(' | ')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string))
    // A bare error code in parentheses names the `error`, not the description.
    .filter((example) => !/^[a-z_]+$/.test(example));
}

/** An example as a pattern: `…` is any text, `("k1")` any key id. */
const asPattern = (example: string): RegExp =>
  new RegExp(`^${example.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('…', '.*').replaceAll('\\("k1"\\)', '\\("[^"]+"\\)')}$`);

describe('rejected registrations (C6, C11)', () => {
  const apps: Record<'open' | 'strict', { running?: RunningApp; store?: CountingStore; token?: string }> = { open: {}, strict: {} };
  let docs: DocServer;
  let material: Material;
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();

  beforeAll(async () => {
    docs = await startDocServer();
    docs.handler = (req, res) => (routes.get(req.url ?? '') ?? ((_q, s) => { s.statusCode = 404; s.end(); }))(req, res);
    const chain = makeCertificateChain();
    material = {
      rsa: (await encryptionKey('RSA-OAEP-256')).jwk,
      rsa1024: { ...(await encryptionKey('RSA-OAEP-256')).jwk, n: Buffer.alloc(128, 0xab).toString('base64url') },
      ec: (await encryptionKey('ECDH-ES')).jwk,
      chain,
      docs: docs.url,
    };
    routes.set('/other.pem', (_q, s) => s.end(chain.otherPem));
    routes.set('/jwks-ok', (_q, s) => json(s, { keys: [material.rsa] }));
    for (const c of CASES) if (c.serve) routes.set(c.serve[0], c.serve[1]);
    for (const mode of ['open', 'strict'] as const) {
      const props = { 'svc.fetch.allow-private-network': mode === 'open' };
      const store = countingStore(createStore(loadSettings({ env: {}, properties: props }).redis));
      // The strict app is also served as https: its redirect URIs must be https, or http on the loopback interface.
      const running = await startApp({ store, properties: props, ...(mode === 'strict' ? { publicScheme: 'https' as const } : {}) });
      apps[mode] = { running, store, token: (await issueInitialAccessToken(running.app.svc.provider)).token };
    }
  }, 30_000);

  afterAll(async () => {
    await docs.close();
    for (const mode of ['open', 'strict'] as const) await apps[mode].running?.close();
  });

  it.each(CASES.map((c) => [c.name, c] as const))('rejects %s', async (_name, c) => {
    const { running, store, token } = apps[c.app ?? 'open'];
    if (!running || !store || !token) throw new Error('app not started');
    const before = { clients: store.writes('Client'), rats: store.writes('RegistrationAccessToken') };
    const res = await register(running, c.body(material), token);
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: c.error });
    expect(res.body.error_description).toEqual(expect.stringContaining(c.names));
    const documented = DOCUMENTED[c.name];
    if (documented !== undefined) expect(res.body.error_description).toMatch(asPattern(documented));
    expect({ clients: store.writes('Client'), rats: store.writes('RegistrationAccessToken') }).toEqual(before);
    // The shared token is left unspent (checked in the store, so no case depends on another).
    expect(await isUnspent(running, token)).toBe(true);
  }, 10_000);

  it('honest: an https provider registers http redirect URIs on the loopback interface (native and local apps), and any https one', async () => {
    const { running } = apps.strict;
    if (!running) throw new Error('app not started');
    for (const uri of ['http://127.0.0.1:8080/cb', 'http://localhost/cb', 'http://app.localhost:3000/cb', 'http://[::1]:9000/cb', 'https://rp.example/cb']) {
      const res = await register(running, { redirect_uris: [uri] }, (await issueInitialAccessToken(running.app.svc.provider)).token);
      expect([uri, res.status, res.body.error_description]).toEqual([uri, 201, undefined]);
    }
  });

  it('honest: a provider served over http for development registers a relying party on another host of its network over http', async () => {
    const { running } = apps.open;
    if (!running) throw new Error('app not started');
    const res = await register(running, { redirect_uris: ['http://rp.lan:3000/cb'] }, (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect([res.status, res.body.error_description]).toEqual([201, undefined]);
  });

  it('leaves an initial access token usable after a rejection: it then registers a client', async () => {
    for (const mode of ['open', 'strict'] as const) {
      const { running } = apps[mode];
      if (!running) throw new Error('app not started');
      const own = (await issueInitialAccessToken(running.app.svc.provider)).token;
      expect((await register(running, { redirect_uris: ['https://rp.example/cb#frag'] }, own)).status).toBe(400);
      expect((await register(running, { redirect_uris: R }, own)).status).toBe(201);
    }
  });
});

describe('the rejection corpus', () => {
  it('produces every rejection message docs/registration.md quotes, and claims only messages it quotes', () => {
    const quoted = quotedExamples();
    expect(quoted.length).toBeGreaterThan(0);
    expect(Object.values(DOCUMENTED).sort()).toEqual([...quoted].sort());
    const names = new Set(CASES.map((c) => c.name));
    expect(Object.keys(DOCUMENTED).filter((name) => !names.has(name))).toEqual([]);
  });

  it('reads the examples as patterns: … is any text, ("k1") any key id, everything else literal', () => {
    const pattern = asPattern('jwks: key #1 ("k1"): x5u http://…/chain.pem: (ECONNREFUSED)');
    expect('jwks: key #1 ("cert-key"): x5u http://127.0.0.1:1/chain.pem: (ECONNREFUSED)').toMatch(pattern);
    expect('jwks: key #1 ("cert-key"): x5u http://127.0.0.1:1/chain.pem: (ECONNREFUSED) and more').not.toMatch(pattern);
    expect('jwks: key #1 ("cert-key")! x5u http://127.0.0.1:1/chain.pem: (ECONNREFUSED)').not.toMatch(pattern);
    expect('jwks: key #1 (cert-key): x5u http://a/chain.pem: (ECONNREFUSED)').not.toMatch(pattern);
  });

  it('names every rule of C6 at least once', () => {
    const names = CASES.map((c) => c.name).join('\n');
    for (const rule of ['RSA1_5', 'PBES2', 'dir', 'none', 'HS256', 'RSA 1024', 'EC key for RSA-OAEP', 'x5c of another key', 'x5t', 'x5u', 'jwks_uri', 'fragment', 'malformed JSON']) {
      expect(names).toContain(rule);
    }
  });
});
