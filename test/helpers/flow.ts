/**
 * The one flow driver of the tests, from the lowest level up:
 * - OAuth pieces by hand ({@link pkcePair}, {@link authorizationUrl}, {@link redirectParams},
 *   {@link redeemCode}) for tests that send exactly the request they mean;
 * - {@link FormBrowser}, a cookie jar that follows redirects and submits our HTML forms, and
 *   {@link signIn}, which drives an authorization request through login and consent;
 * - {@link runCodeFlow}, the whole code flow as a real relying party (openid-client) runs it.
 */
import { createHash, randomBytes } from 'node:crypto';

import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { basicAuthorization } from '../../lib/web/basic-auth.js';

/** A PKCE pair (S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Builds an authorization URL from raw parameters (undefined values are left out). */
export function authorizationUrl(issuer: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${issuer}/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/**
 * The code-flow authorization parameters of `client`: its first redirect URI, scope `openid` and a
 * fresh S256 challenge, then `params` (added or overriding).
 */
export function codeFlowParams(client: ClientMetadata, params: Record<string, string> = {}): Record<string, string> {
  return {
    client_id: String(client.client_id),
    response_type: 'code',
    scope: 'openid',
    redirect_uri: (client.redirect_uris as string[])[0] as string,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...params,
  };
}

/** {@link codeFlowParams} as a URL of `issuer`'s authorization endpoint. */
export function codeFlowUrl(issuer: string, client: ClientMetadata, params: Record<string, string | undefined> = {}): string {
  return authorizationUrl(issuer, { ...codeFlowParams(client), ...params });
}

/** Reads `error`/`state`/`code` from a redirect Location (query or fragment). */
export function redirectParams(location: string): URLSearchParams {
  const url = new URL(location);
  return url.hash ? new URLSearchParams(url.hash.slice(1)) : url.searchParams;
}

/** Redeems an authorization code at the token endpoint with client_secret_basic. */
export async function redeemCode(
  issuer: string,
  client: ClientMetadata,
  code: string,
  verifier: string,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: basicAuthorization(client.client_id, client.client_secret as string, { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: (client.redirect_uris as string[])[0] as string,
    }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

/**
 * A minimal browser for driving the login and consent pages over real HTTP: a cookie jar, manual
 * redirects, and HTML form submission by form id.
 */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();

  /** The last HTML page received. */
  lastPage = '';

  /** Every `Set-Cookie` line received, in order. */
  readonly seenSetCookies: string[] = [];

  /**
   * Cookies another host set where this one reads them (a sibling subdomain's `Domain=` cookies at longer paths):
   * sent before the jar's own, as browsers send longer paths first; no answer replaces them.
   */
  planted: [name: string, value: string][] = [];

  /** Sends a request with the jar's cookies; stores the response's cookies; never follows redirects. */
  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const pairs = [...this.planted, ...this.cookies];
    if (pairs.length > 0) headers.set('cookie', pairs.map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      this.seenSetCookies.push(line);
      this.store(line);
    }
    return response;
  }

  private store(line: string): void {
    const [pair, ...attributes] = line.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (!pair || eq < 0) return;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attributes.some((a) => {
      const [k, v] = a.split('=');
      return k?.trim().toLowerCase() === 'expires' && v !== undefined && Date.parse(v) < Date.now();
    });
    if (!value || expired) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }

  /** Posts `fields` as a form to `url` from a page of `origin` (plus `headers`); never follows redirects. */
  async post(url: string, fields: Record<string, string>, origin: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** The value of cookie `name` in the jar. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** Puts cookie `name` into the jar, as a client that writes its own cookies would. */
  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  /** Forgets every cookie (a fresh browser). */
  clearCookies(): void {
    this.cookies.clear();
  }

  /**
   * Follows redirects from `url` while they stay on `origin`; returns the first response that is
   * not such a redirect, or the Location that leaves `origin`.
   */
  async follow(url: string, origin: string, init?: RequestInit): Promise<{ response?: Response; leftTo?: string }> {
    let response = await this.request(url, init);
    for (let hops = 0; hops < 20; hops += 1) {
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) {
        if ((response.headers.get('content-type') ?? '').includes('html')) this.lastPage = await response.clone().text();
        return { response };
      }
      const next = new URL(location, response.url || url).href;
      if (!next.startsWith(origin)) return { leftTo: next };
      response = await this.request(next);
    }
    throw new Error('too many redirects');
  }

  /** Finds form `#id` in the last page: its absolute action URL. */
  formAction(id: string, pageUrl: string): string {
    const match = new RegExp(`<form[^>]*id="${id}"[^>]*>`).exec(this.lastPage);
    const action = match ? /action="([^"]*)"/.exec(match[0])?.[1] : undefined;
    if (!action) throw new Error(`form #${id} not found on the page`);
    return new URL(action.replace(/&amp;/g, '&'), pageUrl).href;
  }

  /** The hidden inputs of form `#id` in the last page, as a browser submits them. */
  hiddenFields(id: string): Record<string, string> {
    const form = new RegExp(`<form[^>]*id="${id}"[^>]*>([\\s\\S]*?)</form>`).exec(this.lastPage)?.[1] ?? '';
    const fields: Record<string, string> = {};
    for (const [input] of form.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
      const name = /name="([^"]*)"/.exec(input)?.[1];
      const value = /value="([^"]*)"/.exec(input)?.[1] ?? '';
      if (name) fields[name] = value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    }
    return fields;
  }

  /** Submits form `#id` of the last page (its hidden inputs, then `fields`), following redirects on `origin`. */
  async submit(id: string, fields: Record<string, string>, origin: string): Promise<{ response?: Response; leftTo?: string }> {
    return this.follow(this.formAction(id, origin), origin, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ ...this.hiddenFields(id), ...fields }).toString(),
    });
  }
}

/** Result of {@link signIn}: where the provider finally sent the browser. */
export interface SignInResult {
  /** The redirect to the client (carrying `code` or `error`). */
  callbackUrl: URL;
  browser: FormBrowser;
}

/**
 * Drives an authorization request through login and consent and returns the redirect to the
 * client. `consent: 'deny'` presses the deny form.
 */
export async function signIn(
  authorizationUrl: string,
  options: { login?: string; password?: string; consent?: 'allow' | 'deny'; browser?: FormBrowser } = {},
): Promise<SignInResult> {
  const browser = options.browser ?? new FormBrowser();
  const origin = new URL(authorizationUrl).origin;
  let step = await browser.follow(authorizationUrl, origin);
  for (let pages = 0; pages < 4 && !step.leftTo; pages += 1) {
    const page = browser.lastPage;
    if (page.includes('id="login-form"')) {
      step = await browser.submit('login-form', { login: options.login ?? 'demo', password: options.password ?? 'demo' }, origin);
    } else if (page.includes('id="consent-allow"')) {
      step = await browser.submit(options.consent === 'deny' ? 'consent-deny' : 'consent-allow', {}, origin);
    } else {
      throw new Error(`unexpected page (status ${step.response?.status}): ${page.slice(0, 300)}`);
    }
  }
  if (!step.leftTo) throw new Error('the provider never redirected back to the client');
  return { callbackUrl: new URL(step.leftTo), browser };
}

/** Everything a completed code flow produced. */
export interface FlowResult {
  code: string;
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
  claims: oidc.IDToken;
  userinfo: oidc.UserInfoResponse;
  /** Where the token request actually went. */
  tokenRequestUrl?: string;
}

/**
 * Runs the code flow with openid-client against `issuer` for a confidential client: discovery,
 * PKCE S256, login and consent through the HTML forms, code exchange, ID token validation, UserInfo.
 * `rewrite` lets a test send the token request to another process (same issuer, same store).
 */
export async function runCodeFlow(
  issuer: string,
  client: ClientMetadata,
  options: {
    login?: string;
    password?: string;
    tokenOrigin?: string;
    scope?: string;
    /** Extra authorization parameters (e.g. `claims`). */
    params?: Record<string, string>;
    /** Adjusts the openid-client configuration (e.g. `enableDecryptingResponses`). */
    configure?: (config: oidc.Configuration) => void;
    /** Skip the UserInfo call. */
    skipUserinfo?: boolean;
    /** The browser (cookie jar) to sign in with; default a fresh one. */
    browser?: FormBrowser;
  } = {},
): Promise<FlowResult> {
  const config = await oidc.discovery(new URL(issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
    execute: [oidc.allowInsecureRequests],
  });
  options.configure?.(config);
  let tokenRequestUrl: string | undefined;
  if (options.tokenOrigin) {
    const target = options.tokenOrigin;
    config[oidc.customFetch] = (url, init) => {
      const u = new URL(url);
      if (u.pathname.endsWith('/token')) {
        const t = new URL(target);
        u.protocol = t.protocol;
        u.host = t.host;
        tokenRequestUrl = u.href;
      }
      // openid-client passes a RequestInit-compatible object; its body type is narrower in its typings.
      return fetch(u.href, init as RequestInit);
    };
  }
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: (client.redirect_uris as string[])[0] as string,
    scope: options.scope ?? 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    ...options.params,
  });
  const { callbackUrl } = await signIn(url.href, { login: options.login, password: options.password, browser: options.browser });
  const code = callbackUrl.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callbackUrl.href}`);
  const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
  const claims = tokens.claims();
  if (!claims) throw new Error('no ID token');
  const userinfo = options.skipUserinfo ? { sub: claims.sub } : await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
  return { code, tokens, claims, userinfo, tokenRequestUrl };
}

const PROTOCOL_CLAIMS = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'scope', 'sid']);

/** The user data among `claims`: everything but the protocol claims (C4). */
export function userData(claims: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([k]) => !PROTOCOL_CLAIMS.has(k)));
}

/**
 * A sign-in page of one browser (a fresh one unless given) for `client`, with `prompt=login`,
 * driven attempt by attempt from a chosen client address (`X-Forwarded-For`, for an app with
 * `svc.proxy`). An attempt resolves the answer to the post, or, when that sent the browser back to
 * the login page (a failure: 303 to the page, C8), the page it shows then (403, 500, or 429 with `Retry-After`),
 * with the cookies the post set besides its own.
 */
export async function loginAttempts(
  app: { issuer: string; baseUrl: string },
  client: ClientMetadata,
  browser = new FormBrowser(),
): Promise<{ browser: FormBrowser; attempt(login: string, password: string, forwardedFor: string): Promise<Response> }> {
  await browser.follow(codeFlowUrl(app.issuer, client, { prompt: 'login' }), app.baseUrl);
  const action = browser.formAction('login-form', app.baseUrl);
  const page = new URL(action).pathname.replace(/\/login$/, '');
  const attempt = async (login: string, password: string, forwardedFor: string): Promise<Response> => {
    const answer = await browser.post(action, { login, password }, app.baseUrl, { 'x-forwarded-for': forwardedFor });
    if (answer.status === 403 || answer.status === 429) throw new Error(`a sign-in post answered ${answer.status} with a page: it must redirect to its page (303)`);
    if (answer.status !== 303 || answer.headers.get('location') !== page) return answer;
    await answer.arrayBuffer();
    const shown = await browser.request(new URL(page, app.baseUrl).href);
    const headers = new Headers(shown.headers);
    for (const line of answer.headers.getSetCookie()) headers.append('set-cookie', line);
    return new Response(await shown.arrayBuffer(), { status: shown.status, headers });
  };
  return { browser, attempt };
}
