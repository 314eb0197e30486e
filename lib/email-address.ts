/** Longest accepted e-mail address (the RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;

/** A dot-atom local part (RFC 5322 3.2.3) `@` a host name of letters, digits and hyphens (one or more labels). */
const ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/**
 * Why `value` is not an address svc-connect mails to or from (`svc.mail.from`, invitees), or
 * `undefined`: a plain `local@domain` of at most {@link MAX_EMAIL_LENGTH} characters, no display name, quoted part or space.
 */
export function emailAddressDefect(value: string): 'too long' | 'malformed' | undefined {
  if (value.length > MAX_EMAIL_LENGTH) return 'too long';
  return ADDRESS.test(value) ? undefined : 'malformed';
}
