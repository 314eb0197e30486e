/**
 * Bench baseline: vanilla oidc-provider 9 with the same keys, the same encryption settings, the same
 * statically registered client, its built-in dev interactions and the same store adapter as ours,
 * and nothing else of ours. Its account model returns the same claim values as the demo account and
 * puts scope claims in the ID token too (`conformIdTokenClaims: false`), so both servers sign and
 * encrypt the same payloads and the comparison measures svc-connect's own work.
 */
import Provider from 'oidc-provider';

import { createMemoryStore } from '../../adapters/memory.js';
import { createRedisStore } from '../../adapters/redis.js';
import { DEMO_PEOPLE } from '../../examples/claim-modules/index.js';
import { benchClient, type ServerSpec } from './common.js';

const person = DEMO_PEOPLE['demo-0001'];

const spec = JSON.parse(process.env.BENCH_SERVER ?? '{}') as ServerSpec;
const store = spec.redisUrl ? createRedisStore({ url: spec.redisUrl, keyPrefix: spec.keyPrefix }) : createMemoryStore();
const algs = ['RSA-OAEP', 'RSA-OAEP-256', 'ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'] as const;
const encs = ['A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512', 'A128GCM', 'A256GCM'] as const;
const provider = new Provider(`http://127.0.0.1:${spec.port}`, {
  adapter: store.adapter,
  clients: [benchClient(spec.encryptionJwk, spec.signingAlg)],
  jwks: spec.jwks as never, // the same private JWKS as ours; the typings want oidc-provider's own JWK type
  cookies: { keys: [spec.cookieKey] },
  conformIdTokenClaims: false,
  findAccount: (_ctx, sub) => ({
    accountId: sub,
    claims: () => ({
      sub,
      name: person?.name,
      given_name: person?.given_name,
      family_name: person?.family_name,
      birthdate: person?.birthdate,
      email: person?.email,
      email_verified: person?.email_verified,
    }),
  }),
  scopes: ['openid', 'profile', 'email'],
  claims: { openid: ['sub'], profile: ['name', 'given_name', 'family_name', 'birthdate'], email: ['email', 'email_verified'] },
  features: { encryption: { enabled: true }, jwtUserinfo: { enabled: true } },
  enabledJWA: {
    idTokenEncryptionAlgValues: [...algs],
    idTokenEncryptionEncValues: [...encs],
    userinfoEncryptionAlgValues: [...algs],
    userinfoEncryptionEncValues: [...encs],
    idTokenSigningAlgValues: ['RS256', 'PS256', 'ES256'],
    userinfoSigningAlgValues: ['RS256', 'PS256', 'ES256'],
  },
  ttl: { IdToken: 86400, AccessToken: 3600, AuthorizationCode: 60, Interaction: 3600, Session: 1209600, Grant: 1209600 },
});
const server = provider.listen(spec.port, '127.0.0.1', () => process.stdout.write(`ready ${spec.port}\n`));
process.on('SIGTERM', () => server.close(() => void store.close().then(() => process.exit(0))));
