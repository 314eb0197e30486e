import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/** Bytes one authorization request's parameters may store (JSON, UTF-8), so an interaction stays within 16 KiB (C5). */
export const STORED_PARAMETERS_MAX_BYTES = 14 * 1024;

/** Refuses an authorization or PAR request whose parameters would store more than {@link STORED_PARAMETERS_MAX_BYTES}. */
export function assertStoredRequestSize(ctx: KoaContextWithOIDC): void {
  // As oidc-provider stores them: JSON leaves out the parameters it set to `undefined`.
  const bytes = Buffer.byteLength(JSON.stringify(ctx.oidc.params ?? {}), 'utf8');
  if (bytes > STORED_PARAMETERS_MAX_BYTES) {
    throw new errors.InvalidRequest(`the authorization request would store ${bytes} bytes of parameters; at most ${STORED_PARAMETERS_MAX_BYTES} are allowed`);
  }
}

/**
 * Refuses a `state` of more than {@link STORED_PARAMETERS_MAX_BYTES} in any request, before anything reads it:
 * RP-initiated logout keeps it in a session, signed in or not, until she answers (whatever other parameters the
 * request carries), and an authorization request could not store it either.
 */
export function assertStoredStateSize(fields: Record<string, unknown>): void {
  // Given twice (an array), it is refused by oidc-provider as a duplicate before anything is stored.
  if (typeof fields.state !== 'string') return;
  const bytes = Buffer.byteLength(fields.state, 'utf8');
  if (bytes > STORED_PARAMETERS_MAX_BYTES) throw new errors.InvalidRequest(`state is ${bytes} bytes long; at most ${STORED_PARAMETERS_MAX_BYTES} are allowed`);
}
