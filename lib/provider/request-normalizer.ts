import * as querystring from 'node:querystring';

import type { JWK } from 'jose';
import type { Context, Next } from 'koa';
import { errors } from 'oidc-provider';

import { basicAuthorization, parseBasicAuthorization } from '../web/basic-auth.js';
import { logCaughtError, sendCaughtError, sendError } from '../web/error-response.js';
import { parseJsonObject, readBodyText } from '../web/form-body.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../web/json-depth.js';
import { replaceRequestBody } from '../web/replace-request-body.js';
import type { Logger } from '../logger.js';
import { assertStoredStateSize } from '../claims/request-size.js';
import { hashClientSecret, isHashedClientSecret } from '../registration/client-secrets.js';
import { ROUTES } from '../settings/paths.js';
import { PROVIDER_BODY_LIMIT_BYTES } from '../seams.js';
import { openEncryptedHint } from './encrypted-hints.js';
import { assertShallowJwts } from './nested-json.js';
import { droppedParameters, recordRequestEnvelope } from './request-objects.js';

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

/**
 * The canonical client configuration path, for the POST → PUT mapping only: not a check (a POST
 * under another spelling reaches no route, 404; the update's checks run in oidc-provider's PUT).
 */
const CLIENT_CONFIGURATION = new RegExp(`^${ROUTES.registration}/([A-Za-z0-9_-]+)$`);

type Fields = Record<string, unknown>;

/**
 * The members of a client configuration answer the provider alone sets (RFC 7592 section 3): an update echoing them (a
 * client that PUTs back what GET answered) is served with them left out, as oidc-provider would refuse the whole update.
 */
const PROVIDER_SET_MEMBERS = ['registration_access_token', 'registration_client_uri', 'client_id_issued_at', 'client_secret_expires_at'];

/**
 * True when `value` holds, at any depth, a member named `__proto__`. oidc-provider copies a registration body onto the
 * client's metadata with `Object.assign`, which makes a top-level one the prototype of what the policies judge (the
 * stored client keeps its own members only); a nested one is a copy loop away from the same.
 */
const holdsProtoMember = (value: unknown): boolean => typeof value === 'object' && value !== null && (Object.hasOwn(value, '__proto__') || Object.values(value).some(holdsProtoMember));

/** Descriptions of the errors oidc-provider answers without one (C2: every JSON error carries `error_description`). */
const UNDESCRIBED_ERRORS: Readonly<Record<string, string>> = {
  request_uri_not_supported: 'request_uri is accepted only at the authorization endpoint, and only as returned by the pushed authorization request endpoint; send a request object by value (request) otherwise',
  registration_not_supported: 'the registration parameter is not supported: register the client at the registration endpoint',
};

/**
 * An empty secret stays empty: RFC 6749 2.3.1 lets a client omit an empty secret, so oidc-provider reads an empty
 * `client_secret` as none (a public client is served); its hash would be a secret presented, and refused.
 */
const hashedSecret = (v: unknown): unknown => (typeof v === 'string' && v !== '' ? hashClientSecret(v) : v);

function hashSecrets(fields: Fields): boolean {
  const value = fields.client_secret;
  if (!(typeof value === 'string' && value !== '') && !Array.isArray(value)) return false;
  fields.client_secret = Array.isArray(value) ? value.map(hashedSecret) : hashedSecret(value);
  return true;
}

/** Drops the {@link droppedParameters} of an authorization request, told by its `response_type`, never its path. */
function dropIgnoredParameters(fields: Fields): boolean {
  if (fields.response_type === undefined) return false;
  const present = droppedParameters(fields);
  for (const name of present) delete fields[name];
  return present.length > 0;
}

/** The presented secret of an HTTP Basic header, replaced by its hash (parsed as oidc-provider does); an empty one is left for oidc-provider to refuse. */
function hashBasicSecret(ctx: Context): void {
  const given = parseBasicAuthorization(ctx.req.headers.authorization, { formEncoded: true });
  // A malformed header is left as it is: oidc-provider refuses it with invalid_request itself.
  if (given?.password) ctx.req.headers.authorization = basicAuthorization(given.user, hashClientSecret(given.password), { formEncoded: true });
}

/** Reads, normalizes and puts back a form or JSON body; `false` when the request was answered. */
async function normalizeBody(ctx: Context, mappedClientId: string | undefined, keys: readonly JWK[], issuer: string): Promise<boolean> {
  const form = ctx.is(FORM) === FORM;
  const json = !form && ctx.is(JSON_TYPE) === JSON_TYPE;
  if (!form && !json) return true;
  const raw = await readBodyText(ctx, PROVIDER_BODY_LIMIT_BYTES, ctx.request.charset || 'utf-8');
  if (raw === undefined) {
    sendError(ctx, 413, 'invalid_request', `request body larger than ${PROVIDER_BODY_LIMIT_BYTES} bytes`);
    return false;
  }
  let text = raw;
  if (form) {
    const fields: Fields = querystring.parse(raw);
    assertStoredStateSize(fields);
    await assertShallowJwts(fields, keys);
    recordRequestEnvelope(ctx, fields.request);
    const changed = [hashSecrets(fields), await openEncryptedHint(fields, keys, issuer), dropIgnoredParameters(fields)];
    if (changed.includes(true)) text = querystring.stringify(fields as querystring.ParsedUrlQueryInput);
  } else {
    if (nestsDeeperThan(raw)) throw new errors.InvalidRequest(`the JSON body nests more than ${MAX_JSON_DEPTH} levels deep`);
    // Not a JSON object: passed on as it is, for oidc-provider to refuse.
    const fields = parseJsonObject(raw);
    if (fields && holdsProtoMember(fields)) throw new errors.InvalidRequest('a JSON body may not hold a member named "__proto__"');
    if (fields) {
      const filled = mappedClientId !== undefined && fields.client_id === undefined;
      if (filled) fields.client_id = mappedClientId;
      const echoed = ctx.method === 'PUT' ? PROVIDER_SET_MEMBERS.filter((name) => Object.hasOwn(fields, name)) : [];
      for (const name of echoed) delete fields[name];
      if (hashSecrets(fields) || filled || echoed.length > 0) text = JSON.stringify(fields);
    }
  }
  replaceRequestBody(ctx, Buffer.from(text, 'utf8'), `${form ? FORM : JSON_TYPE}; charset=utf-8`);
  return true;
}

/**
 * `provider.use` middleware that puts every provider request, on every path and method, in the form our rules expect:
 * - a presented client secret (Basic, form or JSON) is replaced by its hash before oidc-provider compares
 *   it with the stored hash, so a stolen hash never authenticates: it would be hashed again;
 * - a `state` over the stored-request bound is refused, in any request ({@link assertStoredStateSize});
 * - an `id_token_hint` encrypted to the provider is replaced by the signed ID token it holds, and one encrypted to the
 *   client read as the bare `client_id` its header names ({@link openEncryptedHint});
 * - the ignored parameters, and a `claims` that requests nothing, are dropped, and an encrypted `request`'s header recorded ({@link recordRequestEnvelope});
 * - JSON nested deeper than oidc-provider's recursive cloning survives is refused: a JSON body, a `request` (judged
 *   decrypted with the provider's `decryptionKeys` when encrypted) and a `client_assertion` ({@link assertShallowJwts});
 *   so is a JSON body holding a member named `__proto__` ({@link holdsProtoMember});
 * - `POST` on the canonical client configuration path is served as `PUT` (the seed spec updates by POST;
 *   RFC 7592 by PUT), `client_id` filled in when omitted; a `PUT` body's {@link PROVIDER_SET_MEMBERS} are left out;
 * - a form or JSON body, read in the charset its Content-Type names, is handed on as the UTF-8 text judged and labelled
 *   UTF-8: a reader honouring the client's charset would otherwise decode other fields than were judged;
 * - a response never repeats a stored (hashed) client secret, and a JSON error always carries `error_description`.
 * A body that cannot be read is answered here with an OAuth JSON error, and logged.
 */
export function normalizeProviderRequests(logger: Logger, decryptionKeys: readonly JWK[], issuer: string): (ctx: Context, next: Next) => Promise<void> {
  return async (ctx, next) => {
    try {
      hashBasicSecret(ctx);
      const query = ctx.querystring ? ctx.query : undefined;
      if (query) {
        assertStoredStateSize(query);
        await assertShallowJwts(query, decryptionKeys);
        if ([await openEncryptedHint(query, decryptionKeys, issuer), dropIgnoredParameters(query)].includes(true)) ctx.query = query;
      }
      recordRequestEnvelope(ctx, query?.request);
      const mappedClientId = ctx.method === 'POST' ? CLIENT_CONFIGURATION.exec(ctx.path)?.[1] : undefined;
      if (mappedClientId !== undefined) ctx.method = 'PUT';
      if ((ctx.method === 'POST' || ctx.method === 'PUT') && !(await normalizeBody(ctx, mappedClientId, decryptionKeys, issuer))) return;
    } catch (err) {
      logCaughtError(logger, ctx, err, sendCaughtError(ctx, err));
      return;
    }
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') return;
    if (isHashedClientSecret(body.client_secret)) delete body.client_secret;
    // An error's status only: a 2xx answer may hold a member `error` (her UserInfo claim of that name).
    if (ctx.status >= 400 && typeof body.error === 'string' && body.error_description === undefined) body.error_description = UNDESCRIBED_ERRORS[body.error] ?? 'the request was refused';
  };
}
