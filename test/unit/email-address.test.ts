import { describe, expect, it } from '@jest/globals';

import { canonicalEmailAddress, MAX_EMAIL_LENGTH } from '../../lib/email-address.js';
import { parseEmailAddress } from '../../lib/settings/parse.js';

describe('the one e-mail rule (lib/email-address.ts)', () => {
  it.each([
    'partner@example.com',
    'no-reply@localhost',
    "o'hara+tag@mail.example.org",
    'first.last@example.com',
    'PARTNER@example.com',
    `${'a'.repeat(64)}@example.com`,
    `a@${'b'.repeat(63)}.example`,
    'ops@0xc0ffee.example',
    `${'a'.repeat(64)}@${'b'.repeat(MAX_EMAIL_LENGTH - 64 - 1 - 8)}.example`.replace(/b{63}/g, (l) => `${l.slice(0, 62)}.`),
  ])('accepts %s as written', (address) => {
    expect(canonicalEmailAddress(address)).toEqual({ address });
  });

  it.each([
    ['a domain in capitals', 'PARTNER@EXAMPLE.COM', 'PARTNER@example.com'],
    ['an IDN domain', 'partner+tag@bücher.example', 'partner+tag@xn--bcher-kva.example'],
    ['an IDN domain in capitals', 'Partner@BÜCHER.example', 'Partner@xn--bcher-kva.example'],
    ['a domain of other scripts', 'partner@例え.テスト', 'partner@xn--r8jz45g.xn--zckzah'],
    ['a look-alike Cyrillic е in the domain, shown for what it is', 'partner@еxample.com', 'partner@xn--xample-2of.com'],
  ])('writes %s in ASCII, as it is mailed', (_what, address, ascii) => {
    expect(canonicalEmailAddress(address)).toEqual({ address: ascii });
  });

  it.each([
    ['a display name', 'Partner <partner@example.com>'],
    ['angle brackets', '<partner@example.com>'],
    ['a line break', 'a@example.com\r\nBcc: b@example.com'],
    ['a space', 'a b@example.com'],
    ['a quoted local part', '"a b"@example.com'],
    ['two addresses', 'a@example.com,b@example.com'],
    ['a group', 'g:a@example.com;'],
    ['an address literal', 'a@[192.0.2.1]'],
    ['an IP address as the domain', 'a@192.0.2.1'],
    ['a shorthand IP address as the domain', 'a@1.2.3'],
    ['an all-digit top-level label', 'a@example.123'],
    ['a hexadecimal IP address as the domain (mailed to 127.0.0.1)', 'a@0x7f000001'],
    ['an IP address in hexadecimal pieces as the domain', 'a@0x7f.1'],
    ['a hexadecimal top-level label', 'a@example.0x1'],
    ['no domain', 'a@'],
    ['no local part', '@example.com'],
    ['two @', 'a@b@example.com'],
    ['an empty domain label', 'a@example..com'],
    ['a hyphen at a label edge', 'a@-example.com'],
    ['a trailing dot', 'a@example.com.'],
    ['a leading dot in the local part', '.a@example.com'],
    ['a trailing dot in the local part', 'a.@example.com'],
    ['two dots in a row in the local part', 'a..b@example.com'],
    ['a local part over 64 characters', `${'a'.repeat(65)}@example.com`],
    ['a domain label over 63 characters', `a@${'b'.repeat(64)}.example`],
    ['non-ASCII in the local part', 'jörg@example.com'],
    ['a look-alike Cyrillic а in the local part', 'pаrtner@example.com'],
    ['an IDN domain that is no host name', 'a@bü cher.example'],
    ['punycode that decodes to nothing valid after mapping', 'a@x\u200d.example'],
    // The host parser behind domainToASCII cuts at URL syntax and percent-decodes: each was answered and mailed to another domain.
    ['a slash, after which the host parser cut the domain (mailed to evil.example)', 'a@evil.example/partner.example'],
    ['a backslash in the domain', 'a@evil.example\\partner.example'],
    ['a question mark in the domain', 'a@evil.example?partner.example'],
    ['a hash in the domain', 'a@evil.example#partner.example'],
    ['percent-encoding in the domain', 'a@e%78ample.com'],
    ['a tab inside the domain', 'a@exa\tmple.com'],
  ])('refuses %s', (_what, address) => {
    expect(canonicalEmailAddress(address)).toEqual({ defect: 'malformed' });
  });

  it('refuses an address longer than the RFC 5321 path limit, as written or in ASCII', () => {
    expect(canonicalEmailAddress(`${'a'.repeat(MAX_EMAIL_LENGTH - 11)}@example.com`)).toEqual({ defect: 'too long' });
    const label = 'ä1ö2ü3é4è5ß6ñ7ç8å9ø0';
    const unicode = `${'a'.repeat(64)}@${Array.from({ length: 6 }, () => label).join('.')}.example`;
    expect(unicode.length).toBeLessThanOrEqual(MAX_EMAIL_LENGTH);
    expect(canonicalEmailAddress(unicode)).toEqual({ defect: 'too long' });
  });

  it('is the rule of svc.mail.from too', () => {
    expect(parseEmailAddress(' no-reply@localhost ')).toBe('no-reply@localhost');
    expect(parseEmailAddress('idp@bücher.example')).toBe('idp@xn--bcher-kva.example');
    expect(() => parseEmailAddress('Provider <idp@example.com>')).toThrow('expected an e-mail address, got "Provider <idp@example.com>"');
  });
});
