import { describe, expect, it } from '@jest/globals';

import { emailAddressDefect, MAX_EMAIL_LENGTH } from '../../lib/email-address.js';
import { parseEmailAddress } from '../../lib/settings/parse.js';

describe('the one e-mail rule (lib/email-address.ts)', () => {
  it.each(['partner@example.com', 'no-reply@localhost', "o'hara+tag@mail.example.org", `${'a'.repeat(MAX_EMAIL_LENGTH - 12)}@example.com`])('accepts %s', (address) => {
    expect(emailAddressDefect(address)).toBeUndefined();
  });

  it.each([
    ['a display name', 'Partner <partner@example.com>'],
    ['a line break', 'a@example.com\r\nBcc: b@example.com'],
    ['a space', 'a b@example.com'],
    ['a quoted local part', '"a b"@example.com'],
    ['an address literal', 'a@[192.0.2.1]'],
    ['no domain', 'a@'],
    ['no local part', '@example.com'],
    ['two @', 'a@b@example.com'],
    ['an empty domain label', 'a@example..com'],
    ['a hyphen at a label edge', 'a@-example.com'],
    ['a trailing dot', 'a@example.com.'],
    ['non-ASCII', 'jörg@example.com'],
  ])('refuses %s', (_what, address) => {
    expect(emailAddressDefect(address)).toBe('malformed');
  });

  it('refuses an address longer than the RFC 5321 path limit', () => {
    expect(emailAddressDefect(`${'a'.repeat(MAX_EMAIL_LENGTH - 11)}@example.com`)).toBe('too long');
  });

  it('is the rule of svc.mail.from too', () => {
    expect(parseEmailAddress(' no-reply@localhost ')).toBe('no-reply@localhost');
    expect(() => parseEmailAddress('Provider <idp@example.com>')).toThrow('expected an e-mail address, got "Provider <idp@example.com>"');
  });
});
