import type { Context, Next } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { judgeClientKeySet } from '../../policies/client-key-set.js';
import { keyLabel, type RequestedEncryption } from '../../policies/jwk-rules.js';
import { requestedEncryption } from '../../policies/client-keys.js';
import type { Logger } from '../logger.js';
import type { ProviderFetch } from '../net/provider-fetch.js';
import { ENCRYPTION_ALG_VALUES } from '../../policies/supported-algorithms.js';
import { CLIENT_JWKS_MIN_FRESH_SECONDS, currentRequest } from '../seams.js';
import { ClientKeysRefusedError, OutboundFetchError } from '../errors.js';
import { requestIdOf } from '../web/error-response.js';
import { parseJsonObject } from '../web/form-body.js';
import { clip } from '../terminal-text.js';

/** What was refused while a request was being served, for the error description (by request). */
const refusals = new WeakMap<object, { url: string; rule: string; kept: number }>();
/** Requests during which their client's JWK Set could not be fetched (the fetch failed, or answered no set with a 200). */
const unfetched = new WeakSet<object>();

/** How long (ms) a refused set is remembered, as oidc-provider keeps an accepted one: no refetch and rejudge per request. */
export const REFUSED_SET_MS = CLIENT_JWKS_MIN_FRESH_SECONDS * 1000;
/** Most refused sets remembered at once; the oldest is forgotten first. */
const MAX_REMEMBERED = 1000;
const refusedSets = new Map<string, { until: number; rule: string }>();

/** Remembers a refused set, forgetting expired ones and, when full, the oldest. */
function remember(key: string, rule: string): void {
  const now = Date.now();
  for (const [k, v] of refusedSets) if (v.until <= now || refusedSets.size >= MAX_REMEMBERED) refusedSets.delete(k);
  refusedSets.set(key, { until: now + REFUSED_SET_MS, rule });
}

/**
 * Forgets the refused sets of a client: an update (RFC 7592) vetted its keys as they are now, so the next request
 * fetches them again instead of failing from memory. Other processes forget theirs within {@link REFUSED_SET_MS}.
 */
export function forgetRefusedSetsOf(clientId: string): void {
  for (const key of refusedSets.keys()) if (key.startsWith(`${clientId}\n`)) refusedSets.delete(key);
}

/**
 * Longest a client's key set is used before it is fetched again, whatever its `max-age` or `Expires` says: a client
 * that removes a key (compromised, say) has nothing more encrypted to it after at most this long.
 */
const CLIENT_JWKS_MAX_FRESH_SECONDS = 3600;
/**
 * Longest a client's set is kept before it is fetched again: ten minutes short of the hour, so a failed answer to that
 * fetch still finds the set in its last window of 60-s fallbacks ({@link LAST_FALLBACK_MS}) however long its
 * `max-age`; a set kept the whole hour would meet a failed answer with none (every request failing until it answers).
 */
const CLIENT_JWKS_FRESH_CAP_SECONDS = CLIENT_JWKS_MAX_FRESH_SECONDS - 600;

/**
 * When each client, as oidc-provider holds it (one object per version of its metadata, each with its own copy of the
 * set), was last handed a set: a copy is judged by its own fetch, not by another version's, which may be newer.
 */
const servedAt = new WeakMap<object, number>();
/** How long after a set was fetched a failed answer may still leave it in use 60 s more: it ends within the hour. */
const LAST_FALLBACK_MS = (CLIENT_JWKS_MAX_FRESH_SECONDS - CLIENT_JWKS_MIN_FRESH_SECONDS) * 1000;

/** Every algorithm the provider offers, for a set fetched outside a client's request. */
const EVERY_ALGORITHM: RequestedEncryption = ENCRYPTION_ALG_VALUES.map((alg) => ['encryption', alg] as const);

/** Whose keys `url` holds: the client being served when it is its `jwks_uri`, with its encryption algs; else every alg. */
function ownerOf(url: string, ctx: KoaContextWithOIDC | undefined): { scope: string; requested: RequestedEncryption; client?: object } {
  const client = ctx?.oidc?.client;
  // A jwks_uri that is not a URL is never fetched.
  if (client?.jwksUri && URL.canParse(client.jwksUri) && new URL(client.jwksUri).href === url) {
    return { scope: client.clientId, requested: requestedEncryption(client.metadata()), client };
  }
  return { scope: '', requested: EVERY_ALGORITHM };
}

/** The JWK Set in a body exactly as oidc-provider would read it (`JSON.parse` of the UTF-8 text), or undefined. */
function asJwkSet(body: Buffer): { keys: unknown[] } | undefined {
  const parsed = parseJsonObject(body.toString());
  return Array.isArray(parsed?.keys) ? (parsed as { keys: unknown[] }) : undefined;
}

/**
 * The longest lifetime, in seconds from now, any reading of `headers` could give a response: every number after a
 * `max-age=` anywhere in `Cache-Control` (oidc-provider takes the first, whatever precedes it, and ignores `no-cache`),
 * and `Expires`; oidc-provider keeps a set for the longest of those and 60 s.
 */
function longestLifetime(headers: Headers): number {
  const ages = [...(headers.get('cache-control') ?? '').matchAll(/max-age\s*=\s*"?(\d+)/gi)].map((m) => Number(m[1]));
  const expires = Date.parse(headers.get('expires') ?? '');
  return Math.max(0, ...ages, Number.isNaN(expires) ? 0 : (expires - Date.now()) / 1000);
}

/** Caps the lifetime `headers` give a response at {@link CLIENT_JWKS_FRESH_CAP_SECONDS}, as oidc-provider reads them. */
function capFreshness(headers: Headers): void {
  if (!(longestLifetime(headers) > CLIENT_JWKS_FRESH_CAP_SECONDS)) return;
  headers.set('cache-control', `max-age=${CLIENT_JWKS_FRESH_CAP_SECONDS}`);
  headers.delete('expires');
}

/**
 * Wraps oidc-provider's `fetch` so that the provider never uses a client key that has not passed the
 * key rules when it was fetched (C6): every body oidc-provider would read as a JWK Set (told by its
 * content: `jwks_uri` and `sector_identifier_uri` are fetched alike) is judged by {@link judgeClientKeySet}
 * and only the kept keys reach oidc-provider. Refusals are logged as `client_keys_refused` (never key
 * material); when no key remains the fetch fails and the set is remembered for {@link REFUSED_SET_MS}, or until the
 * client's registration is updated ({@link forgetRefusedSetsOf}). A client's set is kept an hour at most, also through
 * failed answers ({@link LAST_FALLBACK_MS}).
 */
export function vettedJwksFetch(fetch: ProviderFetch, logger: Logger): ProviderFetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const ctx = currentRequest();
    const owner = ownerOf(url, ctx);
    const memory = [owner.scope, ...owner.requested.map(([field, alg]) => `${field}=${alg}`), url].join('\n');
    const known = refusedSets.get(memory);
    if (known && known.until > Date.now()) {
      if (ctx) refusals.set(ctx, { url, rule: known.rule, kept: 0 });
      throw new ClientKeysRefusedError(url, known.rule);
    }
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (err) {
      if (ctx && owner.scope !== '') unfetched.add(ctx);
      throw err;
    }
    const body = Buffer.from(await response.arrayBuffer());
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    const set = asJwkSet(body);
    // oidc-provider would keep the client's set fetched before as long as a failed answer's max-age or Expires
    // says (a day, say): dropped, so a set the client has replaced since is used at most 60 s more.
    if (response.status !== 200 || (!set && owner.scope !== '')) for (const name of ['cache-control', 'expires']) headers.delete(name);
    // A client's set not fetched: the answer failed, or was no JWK Set.
    const notFetched = owner.scope !== '' && (response.status !== 200 || !set);
    if (ctx && notFetched) unfetched.add(ctx);
    // oidc-provider keeps the set it fetched before 60 s more after an answer it reads as JSON but not as a set (a 404 or
    // 503 with a JSON body, a 200 that is no JWK Set), and again after the next: a jwks_uri that fails for good would keep
    // a key it no longer publishes in use for ever. So only while that stays within an hour of the fetch of the set this
    // client object holds (a client cached for metadata changed back holds its own, older copy).
    if (notFetched && !(owner.client && Date.now() <= (servedAt.get(owner.client) ?? -Infinity) + LAST_FALLBACK_MS)) {
      throw new OutboundFetchError(url, `answered HTTP ${response.status}${set ? '' : ' without a JWK Set'}, and no set fetched within the hour may serve meanwhile`);
    }
    if (!set) return new Response(body.length > 0 ? new Uint8Array(body) : null, { status: response.status, headers });
    const judgement = judgeClientKeySet(set, owner.requested);
    const kept = judgement.keys;
    // A set that cannot encrypt to the client as it registered (empty, signing keys only) fails its requests: its
    // max-age or Expires (a year, say) would keep it in use after the client fixed it, so it is kept 60 s, as a failed answer.
    if (owner.scope !== '' && judgement.unserved.length > 0) for (const name of ['cache-control', 'expires']) headers.delete(name);
    else capFreshness(headers);
    const refused = judgement.setDefect !== undefined ? [judgement.setDefect] : judgement.refused.map((r) => clip(r.message, 360));
    if (judgement.dropped.length > 0 && kept.length === 0) {
      refused.push(...judgement.dropped.map((i) => `${keyLabel(set.keys[i], i)}: has neither use nor key_ops, and the client asks for encryption`));
    }
    const served = new Response(JSON.stringify({ ...set, keys: kept }), { status: response.status, headers });
    if (owner.client && response.status === 200 && kept.length > 0) servedAt.set(owner.client, Date.now());
    if (refused.length === 0) return served;
    const rule = refused.slice(0, 3).join('; ') + (refused.length > 3 ? `; and ${refused.length - 3} more` : '');
    if (ctx) refusals.set(ctx, { url, rule, kept: kept.length });
    logger.warn('client_keys_refused', {
      request_id: requestIdOf(ctx),
      client_id: ctx?.oidc?.client?.clientId,
      host: URL.canParse(url) ? new URL(url).host : '',
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
 * Whether keys of a client's `jwks_uri` were refused while `ctx` was served (`client_keys_refused` explains its failure),
 * or could not be fetched (`client JSON Web Key Set failed to be refreshed` does).
 */
export const jwksFailedDuring = (ctx: object): boolean => refusals.has(ctx) || unfetched.has(ctx);

/** `provider.use` middleware: `invalid_client_metadata` after refused `jwks_uri` keys also names the key rule broken. */
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
