import type Provider from 'oidc-provider';

import { issueInitialAccessToken, revokeInitialAccessToken } from '../registration/initial-access-tokens.js';
import { invitationMail } from './invitation-mail.js';
import type { Mailer } from './mailer.js';

/** Longest accepted e-mail address (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;

/** The address is missing, malformed or too long. */
export class InvalidInvitationAddressError extends Error {
  /** Stable code for logs. */
  readonly code = 'SVC_INVALID_INVITATION_ADDRESS';
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidInvitationAddressError';
  }
}

/** The invitation mail could not be sent; the token issued for it was destroyed. */
export class MailDeliveryError extends Error {
  /** Stable code for logs and metrics. */
  readonly code = 'SVC_MAIL_FAILED';
  constructor(options?: { cause?: unknown }) {
    super('the invitation mail could not be sent', options);
    this.name = 'MailDeliveryError';
  }
}

/** Checks an invitee address (a single `local@domain`, no display name, at most 254 characters). */
export function validateInvitationAddress(email: unknown): string {
  if (typeof email !== 'string' || email.trim() === '') throw new InvalidInvitationAddressError('the email query parameter is required');
  const value = email.trim();
  if (value.length > MAX_EMAIL_LENGTH) throw new InvalidInvitationAddressError(`the email query parameter is longer than ${MAX_EMAIL_LENGTH} characters`);
  if (!/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(value)) {
    throw new InvalidInvitationAddressError('the email query parameter is not a valid e-mail address');
  }
  return value;
}

/** What {@link inviteClient} needs. */
export interface InviteOptions {
  provider: Provider;
  mailer: Mailer;
  /** Sender address. */
  from: string;
  /** The invitee. */
  email: string;
  /** Absolute URL of `/oidc/v1/register`. */
  registrationEndpoint: string;
  /** Token lifetime in seconds; default two days. */
  expiresIn?: number;
}

/**
 * Invites a relying party: issues a single-use initial access token (two days) and mails it to
 * `email`. The token never leaves by any other way. When the mail cannot be sent the token is
 * destroyed and {@link MailDeliveryError} is thrown.
 *
 * @throws {@link InvalidInvitationAddressError} for a bad address (nothing is issued).
 */
export async function inviteClient(options: InviteOptions): Promise<{ invited: string; expiresAt: number }> {
  const email = validateInvitationAddress(options.email);
  const { token, expiresAt } = await issueInitialAccessToken(options.provider, { expiresIn: options.expiresIn });
  try {
    await options.mailer.send(invitationMail({ from: options.from, to: email, token, expiresAt, registrationEndpoint: options.registrationEndpoint }));
  } catch (cause) {
    await revokeInitialAccessToken(options.provider, token);
    throw new MailDeliveryError({ cause });
  }
  return { invited: email, expiresAt };
}
