import { domainToASCII } from 'node:url';

/** Longest accepted e-mail address (the RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;

/** Longest local part (RFC 5321 4.5.3.1.1). */
const MAX_LOCAL_PART_LENGTH = 64;

/** A dot-atom (RFC 5322 3.2.3): atoms joined by single dots, none at either end. */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/** A host name: labels of letters, digits and inner hyphens, at most 63 characters each (RFC 1035 2.3.4). */
const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * An address as svc-connect mails to or from it (`svc.mail.from`, invitees), or why it is none: a
 * plain `local@domain` with a dot-atom local part of at most 64 ASCII characters, no display name,
 * quoted part or space, at most {@link MAX_EMAIL_LENGTH} characters, at a host name (not an IP
 * address, `0x7f000001` included). The domain is returned as it is mailed to: in lower case, and a domain in Unicode
 * (IDN) in ASCII (`Bücher.example` → `xn--bcher-kva.example`), which shows a look-alike letter for what it is.
 */
export function canonicalEmailAddress(value: string): { address: string } | { defect: 'too long' | 'malformed' } {
  if (value.length > MAX_EMAIL_LENGTH) return { defect: 'too long' };
  const at = value.lastIndexOf('@');
  const local = value.slice(0, at);
  const written = value.slice(at + 1);
  // As the mailer reads it (nodemailer's envelope): an ASCII domain too, where `0x7f000001` is 127.0.0.1. URL syntax
  // is kept from it (as nodemailer does): the host parser cuts `evil.example/partner.example` to evil.example.
  // eslint-disable-next-line no-control-regex -- controls and space, which the parser drops
  const domain = /[/\\?#%\x00-\x20\x7f]/.test(written) ? '' : domainToASCII(written);
  if (at < 1 || local.length > MAX_LOCAL_PART_LENGTH || !DOT_ATOM.test(local) || !HOST_NAME.test(domain)) return { defect: 'malformed' };
  // An all-digit last label makes an IP address of the name (`1.2.3` reads as 1.2.0.3), never a domain (RFC 3696 2).
  if (/(?:^|\.)\d+$/.test(domain)) return { defect: 'malformed' };
  const address = `${local}@${domain}`;
  return address.length > MAX_EMAIL_LENGTH ? { defect: 'too long' } : { address };
}
