/**
 * Runs one call into an embedder's plug-in (a claim module, the authenticator). Whatever it throws becomes `failed(it)`
 * ({@link ClaimModuleError}, {@link AuthenticatorError}), which keeps no message or cause: an error carrying `expose`
 * (an HTTP error, an oidc-provider error) would otherwise reach the client as its message, and what a plug-in's source
 * says about an account is the person's data. oidc-provider answers it `server_error` with its fixed description.
 */
export async function opaqueFailure<T>(failed: (thrown: unknown) => Error, call: () => Promise<T> | T): Promise<T> {
  try {
    return await call();
  } catch (thrown) {
    throw failed(thrown);
  }
}
