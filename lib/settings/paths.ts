/** The mount path of the provider below the base URL. */
export const PROVIDER_PATH = '/oidc/v1';

/**
 * How the operations routes (`/healthz`, `/readyz`, `/metrics`) match: exactly as C2 writes them, no other letter case
 * and no trailing slash, so a proxy rule keeping one of them off the public internet is not walked around by `/METRICS`.
 */
export const EXACT_PATHS = { sensitive: true, strict: true } as const;

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

/**
 * Where svc-connect lives publicly, derived from `svc.base-url` once, at start, and handed to every
 * part that prints or matches a URL (see {@link publicPathsOf}).
 */
export interface PublicPaths {
  /** `svc.base-url` without a trailing slash. */
  readonly baseUrl: string;
  /** Its origin (`https://example.com`), for same-origin checks. */
  readonly origin: string;
  /** Its path without a trailing slash (`''` at the root, `/auth` for `https://example.com/auth`). */
  readonly basePath: string;
  /** The issuer identifier: `{base_url}/oidc/v1` exactly (C12.1). */
  readonly issuer: string;
  /** The provider's public path, `{basePath}/oidc/v1`: its URLs and its session cookie's path. */
  readonly providerPath: string;
  /** The absolute path of an interaction page. */
  interaction(uid: string): string;
}

/** The {@link PublicPaths} of a base URL. */
export function publicPathsOf(baseUrl: string): PublicPaths {
  const url = new URL(baseUrl);
  const base = baseUrl.replace(/\/+$/, '');
  const basePath = url.pathname.replace(/\/+$/, '');
  const providerPath = `${basePath}${PROVIDER_PATH}`;
  return {
    baseUrl: base,
    origin: url.origin,
    basePath,
    issuer: `${base}${PROVIDER_PATH}`,
    providerPath,
    interaction: (uid) => `${providerPath}/interaction/${encodeURIComponent(uid)}`,
  };
}
