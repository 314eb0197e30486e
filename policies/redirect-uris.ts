import { errors, type ClientMetadata } from 'oidc-provider';

import { isLoopbackHost } from '../lib/net/addresses.js';
import type { PolicyDependencies, RegistrationPolicy } from './types.js';

/** The metadata fields whose URIs a browser is sent to. */
const TARGETS = ['redirect_uris', 'post_logout_redirect_uris'] as const;

/**
 * Why a URI a browser would be sent to reads differently to different parsers, or `undefined`. A browser (WHATWG URL)
 * reads `\` as `/` and drops tabs and newlines, where an RFC 3986 parser sees another host
 * (`https://rp.example\@evil.example/cb`); user information names no relying party and only hides the host
 * behind it (`https://rp.example@evil.example/cb`); half of a surrogate pair is no character, which parsers replace
 * differently.
 */
function ambiguity(uri: string): string | undefined {
  if (uri.includes('\\')) return 'holds a backslash';
  if (/\p{Cs}/u.test(uri)) return 'holds half of a surrogate pair (no character)';
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  if (/[\u0000-\u0020\u007f]/.test(uri)) return 'holds a space or a control character';
  if (!URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  if (url.username || url.password || /^[^/?#]*:\/\/[^/?#]*@/.test(uri)) return 'holds user information (user@host)';
  // A wildcard or punctuation (`https://*/cb`, `https://a;b/cb`) names no host: no browser reaches it, and no code should go there.
  if (url.origin !== 'null' && !/^(\[[\d:a-f.]+\]|[\w.-]+)$/.test(url.hostname)) return 'names no host a browser can reach (a wildcard or punctuation)';
  return undefined;
}

/** True for an `http:` URI whose host is not on the loopback interface: a code sent there crosses a network in clear. */
function clearOffLoopback(uri: unknown): boolean {
  if (typeof uri !== 'string' || !URL.canParse(uri)) return false;
  const url = new URL(uri);
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
}

/**
 * Refuses (`invalid_client_metadata`; oidc-provider answers one about `redirect_uris` as `invalid_redirect_uri`) a
 * redirect or post-logout redirect URI that parsers read differently, so the host the pairwise sector and the
 * registration are judged by is the host every client of the URI goes to. With `httpsOnly` (a provider served over
 * https), a redirect URI must be https too, or http on the loopback interface (RFC 8252 7.3): oidc-provider's own https
 * rule binds only the implicit grant, which is not offered. Its schema checks (absolute, no fragment) follow.
 */
export function judgeRedirectUris(properties: ClientMetadata, httpsOnly: boolean): void {
  for (const field of TARGETS) {
    const uris: unknown = properties[field];
    if (!Array.isArray(uris)) continue;
    for (const [index, uri] of uris.entries()) {
      const why = typeof uri === 'string' ? ambiguity(uri) : undefined;
      if (why) throw new errors.InvalidClientMetadata(`${field}[${index}] ${why}; write the URI as a browser shows it`);
      if (httpsOnly && field === 'redirect_uris' && clearOffLoopback(uri)) {
        throw new errors.InvalidClientMetadata(`${field}[${index}] is http on a host other than loopback: the code would cross the network in clear; use https (http is for the loopback interface)`);
      }
    }
  }
}

/** Policy `svc/redirect-uris`: {@link judgeRedirectUris} at every registration and update. */
export const redirectUrisPolicy = ({ httpsOnly }: Pick<PolicyDependencies, 'httpsOnly'>): RegistrationPolicy => async (_ctx, properties) => judgeRedirectUris(properties, httpsOnly === true);
