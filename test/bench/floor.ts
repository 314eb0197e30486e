/**
 * The cryptographic floor of one flow: what the provider must compute whatever else it does: the
 * PKCE hash, the ID token's signature and encryption, the UserInfo response's signature and
 * encryption. Measured single-threaded, so the result is flows per second per core.
 */
import { createHash, randomBytes } from 'node:crypto';

import { CompactEncrypt, importJWK, SignJWT, type JWK } from 'jose';

/** Flows per second per core that the cryptography alone allows. */
export async function cryptoFloor(signingJwk: JWK, alg: 'RS256' | 'ES256', encryptionJwk: JWK, seconds: number): Promise<number> {
  const signingKey = await importJWK(signingJwk, alg);
  const encryptionKey = await importJWK(encryptionJwk, 'RSA-OAEP-256');
  const claims = { sub: 'demo-0001', name: 'Erika Mustermann', given_name: 'Erika', family_name: 'Mustermann', email: 'erika.mustermann@example.com', email_verified: true };
  const encoder = new TextEncoder();
  const once = async (): Promise<void> => {
    createHash('sha256').update(randomBytes(32).toString('base64url')).digest();
    for (let i = 0; i < 2; i += 1) {
      const jws = await new SignJWT({ ...claims, nonce: 'n' })
        .setProtectedHeader({ alg, kid: 'k' })
        .setIssuer('https://id.example/oidc/v1')
        .setAudience('bench-rp')
        .setIssuedAt()
        .setExpirationTime('1d')
        .sign(signingKey);
      await new CompactEncrypt(encoder.encode(jws)).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A128CBC-HS256', cty: 'JWT' }).encrypt(encryptionKey);
    }
  };
  for (let i = 0; i < 20; i += 1) await once();
  const end = performance.now() + seconds * 1000;
  let flows = 0;
  while (performance.now() < end) {
    await once();
    flows += 1;
  }
  return flows / seconds;
}
