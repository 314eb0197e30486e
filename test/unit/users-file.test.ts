import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

import { fileAuthenticator, fileClaimModule, hashPassword, readUsersFile, verifyPassword } from '../../examples/index.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-users-file-'));
const FAST = { N: 2 ** 14, r: 8, p: 1 };
let count = 0;
const usersFile = (users: unknown): string => {
  count += 1;
  const path = join(dir, `users-${count}.json`);
  writeFileSync(path, typeof users === 'string' ? users : JSON.stringify(users));
  return path;
};

describe('the users file of examples/authenticator-file.ts and examples/claims-file.ts', () => {
  it('hashes with a random salt and verifies in constant time', async () => {
    const a = await hashPassword('pw', FAST);
    const b = await hashPassword('pw', FAST);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt:16384:8:1:[\w-]{22}:[\w-]{43}$/);
    expect(await verifyPassword('pw', a)).toBe(true);
    expect(await verifyPassword('pw ', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('signs in the right sub, and answers an unknown login and a wrong password alike', async () => {
    const users = readUsersFile(usersFile([
      { login: 'alice', sub: 'alice-0001', password: await hashPassword('alice-pw', FAST) },
      { login: 'bob', sub: 'bob-0001', password: await hashPassword('bob-pw', FAST) },
    ]));
    const auth = await fileAuthenticator(users);
    expect(await auth.authenticate('alice', 'alice-pw')).toBe('alice-0001');
    expect(await auth.authenticate('bob', 'bob-pw')).toBe('bob-0001');
    expect(await auth.authenticate('alice', 'bob-pw')).toBeUndefined();
    expect(await auth.authenticate('carol', 'alice-pw')).toBeUndefined();
    expect(await auth.authenticate('ALICE', 'alice-pw')).toBeUndefined();
    expect(await auth.exists('bob-0001')).toBe(true);
    expect(await auth.exists('bob')).toBe(false);
  });

  it('honest: a login and password with a letter composed otherwise than in the file (NFD against NFC, or the other way) sign in, as one login to the throttle', async () => {
    const [renee, zoe] = ['Ren\u00e9e', 'Zoe\u0308'];
    const users = readUsersFile(usersFile([
      { login: renee, sub: 'renee-0001', password: await hashPassword('Pa\u00dfwort \u00e4rger', FAST) },
      { login: zoe, sub: 'zoe-0001', password: await hashPassword('gru\u0308n', FAST) },
    ]));
    const auth = await fileAuthenticator(users);
    expect(await auth.authenticate(renee.normalize('NFD'), 'Pa\u00dfwort \u00e4rger'.normalize('NFD'))).toBe('renee-0001');
    expect(await auth.authenticate(zoe.normalize('NFC'), 'gr\u00fcn')).toBe('zoe-0001');
    expect(auth.canonicalLogin?.(renee.normalize('NFD'))).toBe(auth.canonicalLogin?.(renee));
    expect(auth.canonicalLogin?.(zoe.normalize('NFC'))).toBe(auth.canonicalLogin?.(zoe));
    // Still told apart as before: case, and a compatibility form is another login (NFC, not NFKC).
    expect(await auth.authenticate('REN\u00c9E', 'Pa\u00dfwort \u00e4rger')).toBeUndefined();
    expect(auth.canonicalLogin?.('REN\u00c9E')).not.toBe(auth.canonicalLogin?.(renee));
  });

  it('honest: a login typed with a space before or after it (a phone keyboard completing the word, a paste) signs in, as one login to the throttle', async () => {
    const users = readUsersFile(usersFile([{ login: 'erika', sub: 'erika-0001', password: await hashPassword('her-pw', FAST) }]));
    const auth = await fileAuthenticator(users);
    for (const typed of ['erika ', ' erika', 'erika\u00a0', '\terika\u3000']) {
      expect(await auth.authenticate(typed, 'her-pw')).toBe('erika-0001');
      expect(auth.canonicalLogin?.(typed)).toBe(auth.canonicalLogin?.('erika'));
    }
    // The password is taken as typed: a space is part of it.
    expect(await auth.authenticate('erika', 'her-pw ')).toBeUndefined();
    expect(await auth.authenticate('eri ka', 'her-pw')).toBeUndefined();
  });

  it('refuses a file naming one login twice, once with a space after it, and a login of spaces', async () => {
    const hash = await hashPassword('pw', FAST);
    expect(() => readUsersFile(usersFile([{ login: 'erika', sub: 'a', password: hash }, { login: 'erika ', sub: 'b', password: hash }]))).toThrow(/entry 1: the login is used twice/);
    expect(() => readUsersFile(usersFile([{ login: ' \u00a0', sub: 'a', password: hash }]))).toThrow(/entry 0: login must be a non-empty string/);
  });

  it('refuses a file naming one login twice, composed otherwise', async () => {
    const hash = await hashPassword('pw', FAST);
    expect(() => readUsersFile(usersFile([{ login: 'Ren\u00e9e', sub: 'a', password: hash }, { login: 'Rene\u0301e', sub: 'b', password: hash }]))).toThrow(/entry 1: the login is used twice/);
  });

  it('refuses hashes of different strengths, so an unknown login cannot cost less than a wrong password', async () => {
    const weak = await hashPassword('a', FAST);
    const strong = await hashPassword('b', { ...FAST, p: 2 });
    const users = readUsersFile(usersFile([{ login: 'a', sub: 'a1', password: weak }, { login: 'b', sub: 'b1', password: strong }]));
    await expect(fileAuthenticator(users)).rejects.toThrow('users 0 and 1 of the users file have scrypt hashes of different N, r or p; rehash them alike');
    await expect(fileAuthenticator(users)).rejects.not.toThrow(strong);
  });

  it('provides exactly the claims the file names, per person', async () => {
    const password = await hashPassword('x', FAST);
    const module = fileClaimModule(readUsersFile(usersFile([
      { login: 'a', sub: 'a1', password, claims: { name: 'A', email: 'a@example.com' } },
      { login: 'b', sub: 'b1', password, claims: { email_verified: false } },
    ])));
    expect(module.provides).toEqual(['email', 'email_verified', 'name']);
    expect(await module.resolve('a1', ['name', 'email', 'email_verified'])).toEqual({ name: 'A', email: 'a@example.com' });
    expect(await module.resolve('b1', ['email_verified', 'toString'])).toEqual({ email_verified: false });
    expect(await module.resolve('nobody', ['name'])).toEqual({});
  });

  it.each<[string, unknown, string]>([
    ['not JSON', '{', 'is not valid JSON; set AUTH_USERS_FILE to its path'],
    ['not an array', { users: [] }, 'must hold a JSON array of users'],
    ['no login', [{ sub: 's', password: 'x' }], 'entry 0: login must be a non-empty string'],
    ['a sub with spaces', [{ login: 'l', sub: 'a b', password: 'x' }], 'entry 0: sub must be 1 to 255 printable ASCII characters'],
    ['a plain password', [{ login: 'l', sub: 's', password: 'hunter2' }], 'entry 0: password must be scrypt:N:r:p:salt:hash'],
    ['a weak N', [{ login: 'l', sub: 's', password: 'scrypt:1024:8:1:AAAAAAAAAAAAAAAAAAAAAA:' + 'A'.repeat(43) }], 'entry 0: scrypt N must be a power of two from 16384 to 131072'],
    ['a costly N', [{ login: 'l', sub: 's', password: 'scrypt:1048576:8:1:AAAAAAAAAAAAAAAAAAAAAA:' + 'A'.repeat(43) }], 'scrypt N must be a power of two'],
    ['a short salt', [{ login: 'l', sub: 's', password: 'scrypt:16384:8:1:AAAA:' + 'A'.repeat(43) }], 'scrypt salt must be 16 to 64 bytes'],
    ['a long salt', [{ login: 'l', sub: 's', password: 'scrypt:16384:8:1:' + 'A'.repeat(88) + ':' + 'A'.repeat(43) }], 'scrypt salt must be 16 to 64 bytes'],
    ['a protocol claim', [{ login: 'l', sub: 's', password: 'P', claims: { sub: 'other' } }], 'claims must not set protocol claims (sub)'],
    ['claims as a list', [{ login: 'l', sub: 's', password: 'P', claims: ['name'] }], 'entry 0: claims must be an object of claim names'],
    ['claims of another type than OpenID Connect gives them', [{ login: 'l', sub: 's', password: 'P', claims: { name: 'A', email_verified: 'yes', given_name: { first: 'hunter2' }, birthdate: '12.08.1964' } }], 'entry 0: claims must have the type OpenID Connect gives them (email_verified, given_name, birthdate)'],
    ['a login twice', [{ login: 'l', sub: 's', password: 'P' }, { login: 'l', sub: 't', password: 'P' }], 'entry 1: the login is used twice'],
    ['a sub twice', [{ login: 'l', sub: 's', password: 'P' }, { login: 'm', sub: 's', password: 'P' }], 'entry 1: the sub is used twice'],
  ])('refuses %s, naming the file and the entry and never the hash', async (_what, content, expected) => {
    const valid = await hashPassword('x', FAST);
    const text = typeof content === 'string' ? content : JSON.stringify(content).replaceAll('"P"', JSON.stringify(valid));
    const path = usersFile(text);
    expect(() => readUsersFile(path)).toThrow(expected);
    try {
      readUsersFile(path);
    } catch (err) {
      expect((err as Error).message).toContain(path);
      expect((err as Error).message).not.toContain(valid);
      expect((err as Error).message).not.toContain('hunter2');
    }
  });

  it('names a missing file and the variable to set', () => {
    expect(() => readUsersFile(join(dir, 'absent.json'))).toThrow(`the users file: cannot read ${join(dir, 'absent.json')}: no such file (ENOENT); set AUTH_USERS_FILE to its path`);
  });
});
