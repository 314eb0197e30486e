import Router from '@koa/router';
import type { Context } from 'koa';
import type { Adapter } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { isObject } from '../claims/request.js';
import { readFormBody } from '../web/form-body.js';
import { requestIdOf } from '../web/error-response.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../web/json-depth.js';
import { sendPage } from '../pages/html.js';
import { sameOriginPosts } from '../pages/same-origin-posts.js';
import { silentLogger, type Logger } from '../logger.js';
import type { PublicPaths } from '../settings/paths.js';
import { demoErrorPage, demoFormPage, demoResultPage, DEMO_SCOPES, DEMO_VERIFIED_CLAIMS, type DemoRequestMode } from '../pages/demo-pages.js';
import { authorizationRedirect } from './pushed-request.js';
import { DemoFlowError } from '../errors.js';
import { completeDemoFlow, newFlowSecrets, registerDemoClient, type DemoClient } from './relying-party.js';

/** The demo page's path (C2). */
const DEMO_PATH = '/oidcdemo/login';
const CALLBACK_PATH = '/oidcdemo/callback';
const STATE_COOKIE = 'svc_demo_state';
const FLOW_TTL_MS = 10 * 60 * 1000;

/** Flows the demo page remembers at once; beyond it the oldest is forgotten (its callback fails). */
export const DEMO_PENDING_FLOWS = 1000;

/** Flows one browser may have under way at once (two tabs trying two requests); beyond it the oldest callback fails. */
const DEMO_FLOWS_PER_BROWSER = 5;

/**
 * `/oidcdemo/login` (C8, with `svc.demo.enabled`): runs a real flow for the scopes and `claims`
 * request a person picks, as a demo client registered on first use (and again once the operator deleted it: `clients`
 * is the store's `Client` model as it is, so a client she disabled is still found and stays refused), and shows what travelled.
 */
export function createDemoRouter(options: { provider: Provider; paths: PublicPaths; clients: Pick<Adapter, 'find'>; logger?: Logger }): Router {
  const { provider, paths, clients } = options;
  const { issuer, basePath: base, baseUrl } = paths;
  const logger = options.logger ?? silentLogger;
  const redirectUri = `${baseUrl}${CALLBACK_PATH}`;
  const again = `${base}${DEMO_PATH}`;
  const flows = new Map<string, { client: DemoClient; verifier: string; nonce: string; expires: number; sentTo: string; mode: DemoRequestMode }>();
  let client: Promise<DemoClient> | undefined;
  const demoClient = async (): Promise<DemoClient> => {
    const known = client;
    if (known) {
      const registered = await known;
      if (await clients.find(registered.clientId)) return registered;
      // Deleted in the toolbox: the flows that find it gone register one client again.
      if (client === known) client = undefined;
    }
    client ??= registerDemoClient(provider, issuer, redirectUri).catch((err: unknown) => {
      client = undefined;
      throw err;
    });
    return client;
  };
  /** Shows a failed flow's error page; logs the OAuth error code (when it is one) and our code, never the description. */
  const failed = (ctx: Context, err: unknown): void => {
    if (!(err instanceof DemoFlowError)) throw err;
    const error = /^[a-z_]{1,64}$/.test(err.error) ? err.error : undefined;
    logger.warn('demo_flow_failed', { request_id: requestIdOf(ctx), error, code: err.code });
    sendPage(ctx, demoErrorPage(err.error, err.description, again), 502);
  };

  const cookieOptions = { httpOnly: true, sameSite: 'lax', signed: true, path: `${base}/oidcdemo`, maxAge: FLOW_TTL_MS } as const;
  /** The states of the flows this browser started, newest first (base64url, so `~` separates them). */
  const browserStates = (ctx: Context): string[] => (ctx.cookies.get(STATE_COOKIE, { signed: true }) ?? '').split('~').filter(Boolean);
  const keepStates = (ctx: Context, states: string[]): void => {
    ctx.cookies.set(STATE_COOKIE, states.length ? states.slice(0, DEMO_FLOWS_PER_BROWSER).join('~') : null, cookieOptions);
  };

  const router = new Router();

  router.get(DEMO_PATH, (ctx) => {
    sendPage(ctx, demoFormPage(again));
  });

  router.post(DEMO_PATH, sameOriginPosts(paths.origin), async (ctx) => {
    const form = await readFormBody(ctx);
    const scopes = form.getAll('scope').filter((s) => (DEMO_SCOPES as readonly string[]).includes(s));
    let claims = (form.get('claims') ?? '').trim();
    const refused = (error: string): void => {
      const chosen = { scopes, claims, verified: form.get('verified') === 'yes', prompt: form.get('prompt') ?? '', par: form.get('par') === 'encrypted' };
      sendPage(ctx, demoFormPage(again, error, chosen), 400);
    };
    let parsed: unknown;
    if (claims) {
      // Deeper JSON would overflow the stack when it is written out again below (a 500 from one POST).
      if (nestsDeeperThan(claims)) return refused(`The claims request nests more than ${MAX_JSON_DEPTH} levels deep.`);
      try {
        parsed = JSON.parse(claims);
      } catch {
        return refused('The claims request is not valid JSON.');
      }
    }
    if (form.get('verified') === 'yes') {
      const request = isObject(parsed) ? parsed : {};
      const userinfo = typeof request.userinfo === 'object' && request.userinfo !== null ? (request.userinfo as Record<string, unknown>) : {};
      claims = JSON.stringify({ ...request, userinfo: { ...userinfo, verified_claims: DEMO_VERIFIED_CLAIMS } });
    }
    const prompt = form.get('prompt') ?? '';
    const secrets = newFlowSecrets();
    const params: Record<string, string> = {
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: ['openid', ...scopes].join(' '),
      state: secrets.state,
      nonce: secrets.nonce,
      code_challenge: secrets.challenge,
      code_challenge_method: 'S256',
    };
    if (claims) params.claims = claims;
    if (['login', 'consent', 'none'].includes(prompt)) params.prompt = prompt;
    let url: URL;
    let mode: DemoRequestMode;
    let registered: DemoClient;
    try {
      registered = await demoClient();
      mode = form.get('par') === 'encrypted' ? 'par-encrypted' : registered.requiresPar ? 'par' : 'query';
      url = await authorizationRedirect(registered, issuer, { client_id: registered.clientId, ...params }, mode);
    } catch (err) {
      failed(ctx, err);
      return;
    }
    const now = Date.now();
    for (const [k, v] of flows) if (v.expires < now) flows.delete(k);
    flows.set(secrets.state, { client: registered, verifier: secrets.verifier, nonce: secrets.nonce, expires: now + FLOW_TTL_MS, sentTo: url.href, mode });
    // Anyone may start flows without signing in: the oldest goes, so memory stays bounded.
    for (const oldest of flows.keys()) {
      if (flows.size <= DEMO_PENDING_FLOWS) break;
      flows.delete(oldest);
    }
    keepStates(ctx, [secrets.state, ...browserStates(ctx)]);
    ctx.status = 303;
    ctx.redirect(url.href);
  });

  router.get(CALLBACK_PATH, async (ctx) => {
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const flow = flows.get(state);
    const states = browserStates(ctx);
    if (!flow || !state || !states.includes(state)) {
      // A code for a flow this browser did not start (its authorization URL opened by someone else): the
      // flow is forgotten, so whoever started it cannot have that person's code redeemed with its verifier.
      if (flow && ctx.query.code !== undefined) flows.delete(state);
      sendPage(ctx, demoErrorPage('invalid_state', 'This callback belongs to no flow under way in this browser: its flow finished already (its result page reloaded, or the back button), ran out after 10 minutes, or was started in another browser. Start another.', again), 400);
      return;
    }
    flows.delete(state);
    keepStates(ctx, states.filter((s) => s !== state));
    if (typeof ctx.query.error === 'string') {
      sendPage(ctx, demoErrorPage(ctx.query.error, typeof ctx.query.error_description === 'string' ? ctx.query.error_description : '', again));
      return;
    }
    try {
      const result = await completeDemoFlow(flow.client, issuer, String(ctx.query.code ?? ''), flow.verifier, flow.nonce);
      sendPage(ctx, demoResultPage(result, again, { sentTo: flow.sentTo, mode: flow.mode }));
    } catch (err) {
      failed(ctx, err);
    }
  });

  return router;
}
