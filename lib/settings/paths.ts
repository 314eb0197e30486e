/** The mount path of the provider below the base URL. */
export const PROVIDER_PATH = '/oidc/v1';

/** oidc-provider routes relative to {@link PROVIDER_PATH} (C2). */
export const ROUTES = {
  authorization: '/authorize',
  token: '/token',
  userinfo: '/userinfo',
  end_session: '/logout',
  registration: '/register',
  jwks: '/jwks',
  pushed_authorization_request: '/par',
} as const;

/** The path part of the base URL, without a trailing slash (`''` at the root). */
export function basePathOf(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, '');
}

/** The issuer identifier: `{base_url}/oidc/v1` exactly (C12.1). */
export function issuerOf(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${PROVIDER_PATH}`;
}

/** The absolute path of an interaction page. */
export function interactionPath(baseUrl: string, uid: string): string {
  return `${basePathOf(baseUrl)}${PROVIDER_PATH}/interaction/${encodeURIComponent(uid)}`;
}
