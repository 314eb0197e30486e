import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { SettingsError } from '../../lib/index.js';
import { validateProviderKeys } from '../../lib/provider/keys.js';
import { keyDefect } from '../../policies/jwk-rules.js';
import { startApp } from '../helpers/app.js';
import { RFC7517_PRIVATE_KEYS, RFC7517_PUBLIC_KEYS } from '../helpers/rfc7517-keys.js';

/*
 * RFC 7518 gives each integer of a JWK one spelling: base64url without padding, an RSA member (section 6.3, Base64urlUInt,
 * section 2) in the fewest octets, an EC coordinate (section 6.2.1.2) at its curve's full size. The keys file may be
 * written by another tool otherwise (a Java BigInteger's sign byte before n, base64 with + / =, a coordinate that lost its
 * leading zero byte): the same key, accepted as before, and published in the one spelling, which relying parties that
 * decode strictly (the rules svc-connect holds their own keys to) read.
 */

const dir = mkdtempSync(join(tmpdir(), 'svc-key-spelling-'));
let n = 0;
const [ecA2, rsaA2] = RFC7517_PRIVATE_KEYS;
const PUBLIC_MEMBERS = ['kid', 'kty', 'crv', 'x', 'y', 'n', 'e'] as const;
const publicMembers = (key: JWK): Partial<JWK> => Object.fromEntries(PUBLIC_MEMBERS.filter((m) => key[m] !== undefined).map((m) => [m, key[m]]));
const bytes = (member: unknown): Buffer => Buffer.from(String(member), 'base64url');
/** `member` with `zeros` zero bytes before its value. */
const zeroed = (member: unknown, zeros = 1): string => Buffer.concat([Buffer.alloc(zeros), bytes(member)]).toString('base64url');

/** The keys a provider started with `keys` as its keys file publishes at its jwks_uri. */
async function published(keys: JWK[]): Promise<JWK[]> {
  const file = join(dir, `keys-${(n += 1)}.json`);
  writeFileSync(file, JSON.stringify({ keys }), { mode: 0o600 });
  const running = await startApp({ properties: { 'svc.keys.file': file } });
  try {
    return ((await (await fetch(`${running.issuer}/jwks`)).json()) as { keys: JWK[] }).keys;
  } finally {
    await running.close();
  }
}

describe("the provider's own keys are published in the one spelling RFC 7518 gives them", () => {
  it("honest: RFC 7517's example private keys (Appendix A.2) as the keys file publish exactly its example public keys (A.1)", async () => {
    expect((await published(RFC7517_PRIVATE_KEYS)).map(publicMembers)).toEqual(RFC7517_PUBLIC_KEYS.map(publicMembers));
  });

  it('attack: the same keys written otherwise (n with leading zero bytes, e as "AAEAAQ", base64 with + / and padding, EC members with a leading zero byte) are accepted as the same keys, and published in the one spelling, every one passing the rules relying parties\' keys are held to', async () => {
    const base64 = (member: unknown): string => bytes(member).toString('base64');
    const respelled = [
      [{ ...ecA2, x: zeroed(ecA2.x), y: zeroed(ecA2.y, 2), d: zeroed(ecA2.d) }, { ...rsaA2, n: zeroed(rsaA2.n), e: 'AAEAAQ', p: zeroed(rsaA2.p) }],
      [ecA2, { ...rsaA2, n: base64(zeroed(rsaA2.n, 3)), e: base64(rsaA2.e), d: base64(rsaA2.d) }],
    ];
    for (const keys of respelled) {
      const keysOut = await published(keys);
      expect(keysOut.map(publicMembers)).toEqual(RFC7517_PUBLIC_KEYS.map(publicMembers));
      expect(keysOut.map(keyDefect)).toEqual([undefined, undefined]);
    }
  });

  it('attack: an EC key whose coordinate has a leading zero byte, written without it (31 bytes), is published at the full 32 bytes', async () => {
    let ec: JWK | undefined;
    while (!ec) {
      const candidate = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as JWK;
      if (bytes(candidate.x)[0] === 0) ec = candidate;
    }
    const short = { ...ec, x: bytes(ec.x).subarray(1).toString('base64url'), use: 'sig', kid: 'short-x' };
    const keysOut = await published([rsaA2, short]);
    expect(keysOut.map(publicMembers)).toEqual([publicMembers(rsaA2), { kid: 'short-x', kty: 'EC', crv: 'P-256', x: ec.x, y: ec.y }]);
    expect(keysOut.map(keyDefect)).toEqual([undefined, undefined]);
  });

  it('attack: a member with a character of neither base64 alphabet (a stray "!", a space, which OpenSSL would skip) is refused naming the key and member, not published as written', () => {
    for (const [member, value] of <[string, string][]>[['n', `${String(rsaA2.n).slice(0, 20)}!${String(rsaA2.n).slice(20)}`], ['e', 'AQ AB']]) {
      expect(() => validateProviderKeys({ keys: [{ ...rsaA2, [member]: value }, ecA2] }, 'keys.json')).toThrow(
        new SettingsError(`invalid signing keys in keys.json (svc.keys.file): key #1 has ${member} that is not base64url text`, ['svc.keys.file']),
      );
    }
  });
});
