import { randomBytes } from 'node:crypto';

import { describe, expect, it } from '@jest/globals';
// Keygrip is what Koa uses when `app.keys` is an array (a dependency of `cookies`).
import Keygrip from 'keygrip';

import { CookieKeyring } from '../../lib/web/cookie-keyring.js';

describe('CookieKeyring (the signer of signed cookies)', () => {
  const keys = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
  const data = `_session=${randomBytes(21).toString('base64url')}`;

  it('makes the signatures Keygrip makes, and verifies Keygrip signatures under any of its keys (rolling upgrades, key rotation)', () => {
    const ring = new CookieKeyring(keys);
    expect(ring.sign(data)).toBe(new Keygrip(keys).sign(data));
    expect(ring.index(data, new Keygrip(keys).sign(data))).toBe(0);
    expect(ring.index(data, new Keygrip([keys[1] as string]).sign(data))).toBe(1);
    expect(new Keygrip(keys).index(data, ring.sign(data))).toBe(0);
    expect(ring.verify(data, ring.sign(data))).toBe(true);
  });

  it.each([
    ['a signature under another key', () => new Keygrip([randomBytes(32).toString('hex')]).sign(data)],
    ['the signature of another cookie (name bound)', (ring: CookieKeyring) => ring.sign(data.replace('_session', '_interaction'))],
    ['the signature of another value', (ring: CookieKeyring) => ring.sign(`${data}x`)],
    ['a truncated signature', (ring: CookieKeyring) => ring.sign(data).slice(0, -1)],
    ['a longer signature', (ring: CookieKeyring) => `${ring.sign(data)}A`],
    ['an empty signature', () => ''],
    ['the signature in standard base64', (ring: CookieKeyring) => Buffer.from(ring.sign(data), 'base64url').toString('base64')],
    ['a multibyte string of the same length', (ring: CookieKeyring) => 'é'.repeat(ring.sign(data).length)],
  ])('refuses %s', (_name, forge) => {
    const ring = new CookieKeyring(keys);
    const digest = forge(ring);
    expect(ring.index(data, digest)).toBe(-1);
    expect(ring.verify(data, digest)).toBe(false);
  });

  it('needs a key', () => {
    expect(() => new CookieKeyring([])).toThrow(TypeError);
  });
});
