import { describe, expect, it } from '@jest/globals';

import { basicAuthorization, checkBasicAuth, parseBasicAuthorization } from '../../lib/web/basic-auth.js';

describe('HTTP Basic (lib/web/basic-auth.ts)', () => {
  it('reads back what it builds, a colon in the password and non-ASCII included', () => {
    const header = basicAuthorization('admin', 'pa:ss wörd');
    expect(header).toBe(`Basic ${Buffer.from('admin:pa:ss wörd').toString('base64')}`);
    expect(parseBasicAuthorization(header)).toEqual({ user: 'admin', password: 'pa:ss wörd' });
  });

  it('form-url-encodes both parts for client_secret_basic (RFC 6749 2.3.1), and decodes them, + as a space', () => {
    const header = basicAuthorization('client:1', 'se+cr%t /', { formEncoded: true });
    expect(Buffer.from(header.slice(6), 'base64').toString()).toBe('client%3A1:se%2Bcr%25t%20%2F');
    expect(parseBasicAuthorization(header, { formEncoded: true })).toEqual({ user: 'client:1', password: 'se+cr%t /' });
    expect(parseBasicAuthorization(`Basic ${Buffer.from('a+b:c+d').toString('base64')}`, { formEncoded: true })).toEqual({ user: 'a b', password: 'c d' });
  });

  it('reads the scheme in any case, as oidc-provider does', () => {
    expect(parseBasicAuthorization(`bAsIc ${Buffer.from('u:p').toString('base64')}`)).toEqual({ user: 'u', password: 'p' });
  });

  it.each<[string, string | undefined]>([
    ['no header', undefined],
    ['another scheme', `Bearer ${Buffer.from('u:p').toString('base64')}`],
    ['no credentials', 'Basic '],
    ['two spaces', `Basic  ${Buffer.from('u:p').toString('base64')}`],
    ['no colon', `Basic ${Buffer.from('user-only').toString('base64')}`],
    ['not base64', 'Basic ***'],
  ])('finds no credentials in %s', (_name, header) => {
    expect(parseBasicAuthorization(header)).toBeUndefined();
  });

  it('finds no credentials in a part that does not form-url-decode', () => {
    const header = `Basic ${Buffer.from('client:%E0%A4%A').toString('base64')}`;
    expect(parseBasicAuthorization(header)).toEqual({ user: 'client', password: '%E0%A4%A' });
    expect(parseBasicAuthorization(header, { formEncoded: true })).toBeUndefined();
  });

  it('compares management credentials in Unicode Normalization Form C, as its challenge (charset="UTF-8", RFC 7617 2.1) says: a non-ASCII part composed otherwise than configured signs in', () => {
    const [user, password] = ['jürgen', 'pässwörd:é'];
    expect(checkBasicAuth(basicAuthorization(user.normalize('NFD'), password.normalize('NFD')), user, password)).toBe('ok');
    expect(checkBasicAuth(basicAuthorization(user, password), user.normalize('NFD'), password.normalize('NFD'))).toBe('ok');
  });

  it('honest: normalization folds no other password into hers: another letter, or a compatibility form (NFKC), stays wrong', () => {
    expect(checkBasicAuth(basicAuthorization('jürgen', 'pässwörd:e'), 'jürgen', 'pässwörd:é')).toBe('wrong');
    expect(checkBasicAuth(basicAuthorization('admin', 'ﬁle'), 'admin', 'file')).toBe('wrong');
    expect(checkBasicAuth(basicAuthorization('admin', 'file'), 'admin', 'ﬁle')).toBe('wrong');
  });

  it('checks management credentials: ok, missing, malformed, wrong user or password', () => {
    expect(checkBasicAuth(basicAuthorization('admin', 'secret'), 'admin', 'secret')).toBe('ok');
    expect(checkBasicAuth(undefined, 'admin', 'secret')).toBe('missing');
    expect(checkBasicAuth('Basic ***', 'admin', 'secret')).toBe('malformed');
    expect(checkBasicAuth(basicAuthorization('root', 'secret'), 'admin', 'secret')).toBe('wrong');
    expect(checkBasicAuth(basicAuthorization('admin', 'secret2'), 'admin', 'secret')).toBe('wrong');
    expect(checkBasicAuth(basicAuthorization('admin:secret', ''), 'admin', 'secret')).toBe('wrong');
  });
});
