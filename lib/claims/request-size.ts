import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * Bytes the parameters of one authorization request may take once stored (JSON, UTF-8, after the
 * `claims` parameter is replaced by its stored form). With the session and prompt details an
 * interaction record then stays within 16 KiB (C5), whatever the claim modules provide and whatever
 * `state`, `nonce` or `login_hint` a relying party sends.
 */
export const STORED_PARAMETERS_MAX_BYTES = 14 * 1024;

/**
 * Refuses an authorization (or pushed authorization) request whose parameters would store more than
 * {@link STORED_PARAMETERS_MAX_BYTES}, with `invalid_request` naming the size and the limit. Runs
 * among oidc-provider's `extraParams` checks: after the client, `redirect_uri` and the `claims`
 * parameter are checked (its stored form is measured, not its text) and before anything is stored.
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
