import type { Context, Next } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { judgeClientKeySet } from '../../policies/client-key-set.js';
import { keyLabel } from '../../policies/jwk-rules.js';
import { requestedEncryption } from '../../policies/client-keys.js';
import type { Logger } from '../logger.js';
import type { ProviderFetch } from '../net/provider-fetch.js';
import { ENCRYPTION_ALG_VALUES } from '../../policies/supported-algorithms.js';
import { CLIENT_JWKS_MIN_FRESH_SECONDS, currentRequest } from '../seams.js';
import { ClientKeysRefusedError } from '../errors.js';

/** What was refused while a request was being served, for the error description (by request). */
const refusals = new WeakMap<object, { url: string; rule: string; kept: number }>();

/**
 * How long a refused set is remembered, in ms: as long as oidc-provider keeps a set it accepted
 * at least. Within it, fetching the same URL for the same client fails at once, unfetched and
 * unjudged, so a client cannot make every request fetch and judge its set again.
 */
export const REFUSED_SET_MS = CLIENT_JWKS_MIN_FRESH_SECONDS * 1000;
/** Most refused sets remembered at once; the oldest is forgotten first. */
const MAX_REMEMBERED = 1000;
const refusedSets = new Map<string, { until: number; rule: string }>();

function remember(key: string, rule: string): void {
  const now = Date.now();
  for (const [k, v] of refusedSets) if (v.until <= now || refusedSets.size >= MAX_REMEMBERED) refusedSets.delete(k);
  refusedSets.set(key, { until: now + REFUSED_SET_MS, rule });
}

function recalled(key: string): string | undefined {
  const entry = refusedSets.get(key);
  if (entry && entry.until > Date.now()) return entry.rule;
  refusedSets.delete(key);
  return undefined;
}

/** Encryption keys the provider may pick, as `[field, alg]` (what registration's rule 7 is applied with). */
type Requested = (readonly [field: string, alg: string])[];

/** Every algorithm the provider offers, for a set fetched outside a client's request (never seen in practice). */
const EVERY_ALGORITHM: Requested = ENCRYPTION_ALG_VALUES.map((alg) => ['encryption', alg] as const);

/**
 * Whose keys `url` holds: the client of the request being served, when `url` is its `jwks_uri`
 * (oidc-provider fetches a client's set only while serving it), with the encryption algorithms it
 * registered; otherwise nobody known, and every algorithm the provider offers.
 */
function ownerOf(url: string, ctx: KoaContextWithOIDC | undefined): { scope: string; requested: Requested } {
  const client = ctx?.oidc?.client;
  try {
    if (client?.jwksUri && new URL(client.jwksUri).href === url) return { scope: client.clientId, requested: requestedEncryption(client.metadata()) };
  } catch {
    // A jwks_uri that is not a URL is never fetched.
  }
  return { scope: '', requested: EVERY_ALGORITHM };
}

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

/** The JWK Set in a body exactly as oidc-provider would read it (`JSON.parse` of the UTF-8 text), or undefined. */
function asJwkSet(body: Buffer): { keys: unknown[] } | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString());
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Array.isArray((parsed as { keys?: unknown }).keys)) return parsed as { keys: unknown[] };
  } catch {
    // Not JSON: oidc-provider refuses it itself.
  }
  return undefined;
}

function hostOf(input: string | URL | Request): string {
  try {
    return new URL(input instanceof Request ? input.url : String(input)).host;
  } catch {
    return '';
  }
}

/**
 * Wraps oidc-provider's `fetch` so that the provider never encrypts to (or verifies with) a client
 * key that has not passed the key rules at the moment it was fetched (C6), and never picks one it
 * could not encrypt to: every JWK Set oidc-provider fetches is judged by the one key judgement of
 * registration ({@link judgeClientKeySet}), for the encryption algorithms the client registered
 * (the client whose request is being served, found through oidc-provider's request context, when
 * the set is its `jwks_uri`; every offered algorithm otherwise). oidc-provider sees only the keys
 * it keeps, with their labels normalised as at registration (an EC key's `key_ops: ["encrypt"]`
 * becomes `use: "enc"`), and without keys that have neither `use` nor `key_ops` while encryption
 * is asked for. Refused keys are logged as `client_keys_refused` (URL host, counts and the first
 * rule; never key material); a set beyond the limits of the judgement (33 keys, RSA keys too costly
 * to judge) is refused whole, as at registration; when no key remains, the fetch fails,
 * oidc-provider answers `invalid_client_metadata` and nothing is encrypted or sent. A refused set
 * is remembered for {@link REFUSED_SET_MS}: within it the same URL fails for the same client (and
 * registered algorithms) at once, unfetched.
 *
 * How a JWK Set is told apart: by its content, not by the request. oidc-provider fetches a
 * client's `jwks_uri` with `Accept: application/json`, the same header as `sector_identifier_uri`
 * and client metadata documents. So every response body that oidc-provider would accept as a JWK
 * Set (its `JSON.parse` of the text giving an object with a `keys` array, the one thing its
 * keystore refresh checks) is judged, whatever request it answered; other bodies pass unchanged.
 * Nothing shaped like a key set reaches the provider unjudged, and nothing depends on
 * oidc-provider's headers staying as they are.
 */
export function vettedJwksFetch(fetch: ProviderFetch, logger: Logger): ProviderFetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const ctx = currentRequest();
    const owner = ownerOf(url, ctx);
    const memory = [owner.scope, ...owner.requested.map(([field, alg]) => `${field}=${alg}`), url].join('\n');
    const known = recalled(memory);
    if (known !== undefined) {
      if (ctx) refusals.set(ctx, { url, rule: known, kept: 0 });
      throw new ClientKeysRefusedError(url, known);
    }
    const response = await fetch(input, init);
    const body = Buffer.from(await response.arrayBuffer());
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    const set = asJwkSet(body);
    if (!set) return new Response(body.length > 0 ? new Uint8Array(body) : null, { status: response.status, headers });
    const judgement = judgeClientKeySet(set, owner.requested);
    const kept = judgement.keys;
    const refused = judgement.setDefect !== undefined ? [judgement.setDefect] : judgement.refused.map((r) => clip(r.message, 360));
    if (judgement.dropped.length > 0 && kept.length === 0) {
      refused.push(...judgement.dropped.map((i) => `${keyLabel(set.keys[i], i)}: has neither use nor key_ops, and the client asks for encryption`));
    }
    // What the provider sees is the judgement's: kept keys, labels normalised, unlabelled ones left out.
    const served = new Response(JSON.stringify({ ...set, keys: kept }), { status: response.status, headers });
    if (refused.length === 0) return served;
    const rule = refused.slice(0, 3).join('; ') + (refused.length > 3 ? `; and ${refused.length - 3} more` : '');
    if (ctx) refusals.set(ctx, { url, rule, kept: kept.length });
    logger.warn('client_keys_refused', {
      request_id: (ctx?.state as { requestId?: string } | undefined)?.requestId,
      client_id: ctx?.oidc?.client?.clientId,
      host: hostOf(input),
      refused: set.keys.length - kept.length - judgement.dropped.length,
      ...(judgement.dropped.length > 0 ? { dropped: judgement.dropped.length } : {}),
      kept: kept.length,
      rule: refused[0],
    });
    if (kept.length === 0) {
      remember(memory, rule);
      throw new ClientKeysRefusedError(url, rule);
    }
    return served;
  };
}

/**
 * `provider.use` middleware: when a request failed with `invalid_client_metadata` after keys from
 * the client's `jwks_uri` were refused (oidc-provider says only "client JSON Web Key Set failed to
 * be refreshed" or "no suitable encryption key found"), the description also says which key broke
 * which rule, so the relying party knows what to fix. Status and error code stay oidc-provider's.
 */
export function explainRefusedClientKeys() {
  return async (ctx: Context, next: Next): Promise<void> => {
    await next();
    const refusal = refusals.get(ctx);
    const body = ctx.body as { error?: unknown; error_description?: unknown } | undefined;
    if (!refusal || !body || typeof body !== 'object' || body.error !== 'invalid_client_metadata' || typeof body.error_description !== 'string') return;
    const what = refusal.kept === 0 ? 'no key passed the key rules' : 'keys refused by the key rules';
    body.error_description = `${body.error_description}: jwks_uri ${refusal.url}: ${what} (${refusal.rule})`;
  };
}
