import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * Bytes the parameters of one authorization request may take once stored (JSON, UTF-8, with the
 * `claims` parameter in its stored form), so an interaction record stays within 16 KiB (C5).
 */
export const STORED_PARAMETERS_MAX_BYTES = 14 * 1024;

/**
 * Refuses (`invalid_request`) an authorization or PAR request whose parameters would store more than
 * {@link STORED_PARAMETERS_MAX_BYTES}; runs among the `extraParams` checks, before anything is stored.
 */
export function assertStoredRequestSize(ctx: KoaContextWithOIDC): void {
  const params = ctx.oidc.params;
  if (!params) return;
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) if (value !== undefined) kept[name] = value;
  const bytes = Buffer.byteLength(JSON.stringify(kept), 'utf8');
  if (bytes > STORED_PARAMETERS_MAX_BYTES) {
    throw new errors.InvalidRequest(`the authorization request would store ${bytes} bytes of parameters; at most ${STORED_PARAMETERS_MAX_BYTES} are allowed`);
  }
}
