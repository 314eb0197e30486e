/**
 * Runs one call into an embedder's plug-in (a claim module, the authenticator). Whatever it throws becomes a plain
 * error naming the plug-in only (`name`, `code`, no cause): an error carrying `expose` (an HTTP error, an oidc-provider
 * error) would otherwise reach the client as its message, and what a plug-in's source says about an account is the
 * person's data. oidc-provider answers the plain error `server_error` with its fixed description.
 */
export async function opaqueFailure<T>(failure: { name: string; code: string; message: string }, call: () => Promise<T> | T): Promise<T> {
  try {
    return await call();
  } catch {
    throw Object.assign(new Error(failure.message), { name: failure.name, code: failure.code });
  }
}
