import type Provider from 'oidc-provider';

import { refOf } from '../../adapters/inventory.js';
import { issueInitialAccessToken, revokeInitialAccessToken } from '../registration/initial-access-tokens.js';
import { invitationMail } from './invitation-mail.js';
import type { Mailer, MailReceipt } from './mailer.js';
import { invitationId } from './toolbox.js';
import { canonicalEmailAddress, MAX_EMAIL_LENGTH } from '../email-address.js';
import { InvalidInvitationAddressError, MailDeliveryError } from '../errors.js';

/** Checks an invitee address by the one e-mail rule, and returns it as it is mailed ({@link canonicalEmailAddress}). */
function validateInvitationAddress(email: unknown): string {
  if (typeof email !== 'string' || email.trim() === '') throw new InvalidInvitationAddressError('the email query parameter is required');
  const result = canonicalEmailAddress(email.trim());
  if ('address' in result) return result.address;
  if (result.defect === 'too long') throw new InvalidInvitationAddressError(`the email query parameter is longer than ${MAX_EMAIL_LENGTH} characters`);
  throw new InvalidInvitationAddressError('the email query parameter is not a valid e-mail address');
}

/**
 * What a mailer resolved with, when it is a {@link MailReceipt} (its members alone); anything else, such as what
 * nodemailer's `sendMail` answers (its stream and JSON transports hold the whole message, token included), is none.
 */
function receiptOf(value: unknown): MailReceipt | undefined {
  const { transport, host, file } = (value ?? {}) as Partial<Record<'transport' | 'host' | 'file', unknown>>;
  if (transport === 'smtp' && typeof host === 'string') return { transport, host };
  return transport === 'outbox' && typeof file === 'string' ? { transport, file } : undefined;
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
 * Invites a relying party: issues a single-use initial access token (two days) and mails it to `email`. The result
 * names the invitation (`inv_…`, as the toolbox lists and revokes it) and, when the mailer resolved with a
 * {@link MailReceipt}, where the mail went; never the token.
 * When the mail cannot be sent the token is destroyed and {@link MailDeliveryError} is thrown.
 *
 * @throws {@link InvalidInvitationAddressError} for a bad address (nothing is issued).
 */
export async function inviteClient(options: InviteOptions): Promise<{ invited: string; expiresAt: number; invitation: string; mail?: MailReceipt }> {
  const email = validateInvitationAddress(options.email);
  const { token, expiresAt } = await issueInitialAccessToken(options.provider, { expiresIn: options.expiresIn });
  let receipt: MailReceipt | undefined;
  try {
    receipt = receiptOf(await options.mailer.send(invitationMail({ from: options.from, to: email, token, expiresAt, registrationEndpoint: options.registrationEndpoint })));
  } catch (cause) {
    await revokeInitialAccessToken(options.provider, token);
    throw new MailDeliveryError({ cause, ...(options.mailer.where ? { where: options.mailer.where } : {}) });
  }
  return { invited: email, expiresAt, invitation: invitationId(refOf(token)), ...(receipt ? { mail: receipt } : {}) };
}
