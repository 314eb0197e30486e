import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Client, Grant, Interaction, InteractionResults } from 'oidc-provider';

import { asAuthenticatorError, isAuthenticatorOutage } from '../claims/authenticator-guard.js';
import { opaqueFailure } from '../claims/plugin-failure.js';
import { describeRequest } from '../claims/describe.js';
import { carriedOver, consentGrantNames, deliveryOf, deliveryText, grantedOf, recordDelivery, recordedDelivery } from '../claims/delivery.js';
import { ESSENTIAL_CLAIMS_PROMPT } from '../claims/essential-check.js';
import { scopeChannel } from '../claims/account.js';
import { claimsForScope } from '../claims/scopes.js';
import { channelMode } from '../claims/privacy.js';
import { isObject } from '../claims/request.js';
import { VERIFIED_CLAIMS, verifiedGrantNamesOf, verifiedRequestsOf } from '../claims/verified-request.js';
import { parseJsonObject, readFormBody } from '../web/form-body.js';
import { logCaughtError, noStore, requestIdOf } from '../web/error-response.js';
import { formTargetsOf, sendPage } from '../pages/html.js';
import { sameOriginPosts } from '../pages/same-origin-posts.js';
import { PROVIDER_PATH, type PublicPaths } from '../settings/paths.js';
import type { Authenticator } from '../claims/authenticator.js';
import type { LoginThrottle } from './login-throttle.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { consentPage, loginPage, type LoginPageModel } from '../pages/interaction-pages.js';
import { bindSignIn } from './sign-in-binding.js';
import { failedSignIns } from './failed-sign-in.js';
import { consentUndo, type ConsentUndoRecords, type GrantNames } from './consent-undo.js';

/** What the interactions router needs. */
export interface InteractionsOptions {
  provider: Provider;
  authenticator: Authenticator;
  paths: PublicPaths;
  /** Every sign-in attempt passes it. */
  throttle: LoginThrottle;
  /** Logs `login_throttled` (no login name, no address). */
  logger?: Logger;
  /** Counts `login_throttled` security events, when metrics are on. */
  metrics?: Metrics;
  /** `svc.stage.include-scopes-in-user-info`: where the scope claims travel (C5). */
  includeScopesInUserInfo: boolean;
  /** The scopes the deployment offers: the consent page describes only theirs. Default: every scope of the map. */
  offeredScopes?: ReadonlySet<string>;
  /** `claims_supported`: the consent page asks for no other name (none is ever delivered), and grants record no other. */
  deliverableClaims: ReadonlySet<string>;
  /** What a claim holds, in the words of the module providing it (its `holds`), for the consent page. */
  holdsOf?: (claim: string) => string | undefined;
  /** The store's `ConsentUndo` records (`CONSENT_UNDO_MODEL`): what the Allows of an interaction hold of the grant they extended, until her last answer. */
  consentUndo: ConsentUndoRecords;
  /** The cookie keys, newest first: a failed sign-in travels to its page encrypted under the first; all open it. */
  cookieKeys: readonly string[];
}

/** What oidc-provider's consent prompt found missing from her grant for this request. */
interface MissingNames {
  missingOIDCScope?: string[];
  missingOIDCClaims?: string[];
}

const stringParam = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The login and consent pages under `/oidc/v1/interaction/{uid}`: GET shows the page the prompt
 * needs, POST `/login` signs in, POST `/confirm` grants, POST `/abort` denies.
 */
export function createInteractionsRouter(options: InteractionsOptions): Router {
  const { provider, authenticator, paths, throttle } = options;
  const router = new Router({ prefix: `${PROVIDER_PATH}/interaction` });
  const offeredOnly = (scope: string | undefined): string | undefined =>
    options.offeredScopes && scope !== undefined ? scope.split(' ').filter((s) => options.offeredScopes?.has(s)).join(' ') : scope;
  // On each form route, not `router.use`: a refused post is then labelled by its route (`ctx.routerPath`).
  const sameOrigin = sameOriginPosts(paths.origin);

  // Not `interactionFinished`: it ends the response itself, before storeBatch has stored the result.
  // `interactionResult` loads the interaction again, from the request's batch: no extra store command.
  // The redirect URI is checked again where oidc-provider resumes (interactions/redirect-check.ts).
  const finish = async (ctx: Context, result: InteractionResults): Promise<void> => {
    ctx.status = 303;
    ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result));
  };

  const undo = consentUndo(provider, options.consentUndo);
  const failures = failedSignIns(options.cookieKeys, (uid) => paths.interaction(uid));

  /**
   * What her consent page showed and her Allow approved, of this request alone (never of the grant it extends): its
   * scopes, with their claims, the claims its `claims` parameter names, and `requestNames` (where each travels, how
   * each is named, verified claims and their details).
   */
  const shownOn = (details: Interaction, prompt: MissingNames, claims: unknown, requestNames: readonly string[]): GrantNames => {
    const scope = [...new Set([...(offeredOnly(stringParam(details.params.scope)) ?? '').split(' '), ...(prompt.missingOIDCScope ?? [])])].filter(Boolean).join(' ');
    const channels = isObject(claims) ? [claims.id_token, claims.userinfo] : [];
    const named = channels.flatMap((channel) => (isObject(channel) ? Object.keys(channel) : [])).filter((n) => options.deliverableClaims.has(n));
    // oidc-provider passes `verified_claims` only while the grant holds that name: a page showing a verified claim approved it.
    const verified = channels.some((channel) => verifiedRequestsOf(channel).length > 0) ? [VERIFIED_CLAIMS] : [];
    return { scope, names: [...claimsForScope(scope), ...named, ...verified, ...(prompt.missingOIDCClaims ?? []), ...requestNames] };
  };

  const clientFor = async (clientId: unknown): Promise<{ name: string; client?: Client }> => {
    const client = typeof clientId === 'string' ? await provider.Client.find(clientId) : undefined;
    return { client, name: client?.clientName ?? (typeof clientId === 'string' ? clientId : 'the application') };
  };

  const showLogin = async (ctx: Context, details: Interaction, model: Partial<LoginPageModel> = {}, status = 200): Promise<void> => {
    const { name: clientName } = await clientFor(details.params.client_id);
    const action = `${paths.interaction(details.uid)}/login`;
    sendPage(ctx, loginPage({ action, clientName, redirectTargets: formTargetsOf(details.params.redirect_uri), ...model }), status);
  };

  /** The login page as her last failed sign-in in it left it: 403 (RFC 9110 15.5.4; a form has no scheme for the challenge a 401 must carry), 500 for a failed authenticator, or 429 while the throttle refuses the name (then with her login only). */
  const showLoginAgain = (ctx: Context, details: Interaction): Promise<void> => {
    const failure = failures.recall(ctx, details.uid);
    if (!failure) return showLogin(ctx, details);
    const { login, lockedUntil, fault } = failure;
    if (fault) return showLogin(ctx, details, { login, fault }, 500);
    if (lockedUntil === undefined) return showLogin(ctx, details, { login, failed: true }, 403);
    const retryAfterSeconds = Math.ceil((lockedUntil - Date.now()) / 1000);
    if (retryAfterSeconds < 1) return showLogin(ctx, details, { login });
    ctx.set('Retry-After', String(retryAfterSeconds));
    return showLogin(ctx, details, { login, retryAfterSeconds }, 429);
  };

  /** The interaction of the request's cookie, which must be the one its URL names (a page or form of another is refused). */
  const interactionOf = async (ctx: Context & { params: { uid?: string } }): Promise<Interaction> => {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.uid !== ctx.params.uid) ctx.throw(400, 'this page belongs to another sign-in: start again from the application');
    return details;
  };

  /**
   * The grant her Allow in another tab gave the client after this page was opened (no grant then): this page joins
   * it, as if opened after that Allow (its interaction now names it, so a Deny here takes out only what this Allow
   * added). A grant of its own would replace that one in her session, and oidc-provider ends the codes and tokens of
   * a grant her session no longer names: the other tab's sign-in at the application would stop working.
   */
  const joinedGrantOfAnotherTab = async (details: Interaction, accountId: string): Promise<Grant | undefined> => {
    const clientId = stringParam(details.params.client_id);
    const session = details.session?.uid ? await provider.Session.findByUid(details.session.uid) : undefined;
    const grantId = clientId && session?.accountId === accountId ? session.grantIdFor(clientId) : undefined;
    const grant = grantId ? await provider.Grant.find(grantId) : undefined;
    if (!grant || grant.accountId !== accountId || grant.clientId !== clientId) return undefined;
    details.grantId = grant.jti;
    await details.save(Math.max(1, details.exp - Math.floor(Date.now() / 1000)));
    return grant;
  };

  router.get('/:uid', async (ctx) => {
    const details = await interactionOf(ctx);
    if (details.prompt.name === 'login') return showLoginAgain(ctx, details);
    const path = paths.interaction(details.uid);
    const { name: clientName, client } = await clientFor(details.params.client_id);
    if (details.prompt.name === ESSENTIAL_CLAIMS_PROMPT) {
      // Which claim is missing is not said: the result is stored in the interaction until the client receives it.
      await finish(ctx, { error: 'access_denied', error_description: 'an essential claim is not available for this account' });
      return;
    }
    if (details.prompt.name !== 'consent') return ctx.throw(400, 'this interaction expects no page');
    sendPage(
      ctx,
      consentPage({
        allowAction: `${path}/confirm`,
        denyAction: `${path}/abort`,
        clientName,
        redirectUri: String(details.params.redirect_uri),
        items: describeRequest(offeredOnly(stringParam(details.params.scope)), stringParam(details.params.claims), scopeChannel(client, options.includeScopesInUserInfo), options.deliverableClaims, options.holdsOf),
        channels: {
          idToken: client ? channelMode(client, 'id_token') : 'withheld',
          userinfo: client ? channelMode(client, 'userinfo') : 'withheld',
        },
        delivery: client ? deliveryText(deliveryOf(client)) : '',
        redirectTargets: formTargetsOf(details.params.redirect_uri),
        sharedSubject: client?.subjectType === 'public',
      }),
    );
  });

  router.post('/:uid/login', sameOrigin, async (ctx) => {
    const details = await interactionOf(ctx);
    if (details.prompt.name !== 'login') ctx.throw(400, 'this interaction does not expect a login');
    const form = await readFormBody(ctx);
    const login = form.get('login') ?? '';
    const password = form.get('password') ?? '';
    // Post/Redirect/Get: the page is shown by a GET, so reloading it sends nothing again (no attempt counted twice).
    const failed = (failure: { lockedUntil?: number; fault?: boolean } = {}): void => {
      failures.remember(ctx, details, { login, ...failure });
      noStore(ctx);
      ctx.status = 303;
      ctx.redirect(paths.interaction(details.uid));
    };
    // An empty field guesses nothing: the form is shown again without counting an attempt.
    if (!login || !password) return failed();
    const attempt = await throttle.begin(ctx, login);
    const throttled = (locked: string, retryAfterSeconds: number): void => {
      options.logger?.warn('login_throttled', { request_id: requestIdOf(ctx), locked, retry_after: retryAfterSeconds });
      options.metrics?.securityEvents.inc({ event: 'login_throttled' });
      failed({ lockedUntil: Date.now() + retryAfterSeconds * 1000 });
    };
    if (!attempt.allowed) return throttled(attempt.locked, attempt.retryAfterSeconds);
    let answered: string | undefined;
    try {
      answered = await opaqueFailure(asAuthenticatorError, () => authenticator.authenticate(login, password));
    } catch (err) {
      // An outage its authenticator reported judged nothing: as a store outage, it counts nothing (503).
      if (isAuthenticatorOutage(err)) throw err;
      // Not answered (thrown, as an LDAP bind does for a wrong password; too late; no account id): counted as a failure.
      const wait = await attempt.failed();
      if (wait) return throttled('name', wait);
      // Logged as what a route throws is; the page its 303 sends her to says it went wrong.
      if (options.logger) logCaughtError(options.logger, ctx, err);
      return failed({ fault: true });
    }
    // An account its authenticator no longer knows (disabled) signs in nowhere: answered as a wrong password. Asked only
    // after a right password, so what it throws or leaves unanswered is no wrong guess and counts nothing.
    const accountId = answered && (await opaqueFailure(asAuthenticatorError, () => authenticator.exists(answered))) ? answered : undefined;
    // Answered as judged only while no failure that settled first locked a counter; else 429 for right and wrong alike.
    const wait = accountId ? await attempt.succeeded() : await attempt.failed();
    if (wait) return throttled('name', wait);
    if (!accountId) return failed();
    failures.forget(ctx, details.uid);
    await finish(ctx, { login: { accountId }, ...bindSignIn(ctx, details) });
  });

  router.post('/:uid/confirm', sameOrigin, async (ctx) => {
    const details = await interactionOf(ctx);
    const accountId = details.session?.accountId;
    if (details.prompt.name !== 'consent' || !accountId) {
      return ctx.throw(400, 'this interaction does not expect a consent');
    }
    // Her account deleted since the page was shown: nothing is granted, and the resume, finding no account, ends her
    // session and shows the login page.
    if (!(await opaqueFailure(asAuthenticatorError, () => authenticator.exists(accountId)))) return finish(ctx, { consent: {} });
    const promptDetails = details.prompt.details as MissingNames;
    const existing = details.grantId ? await provider.Grant.find(details.grantId) : await joinedGrantOfAnotherTab(details, accountId);
    if (details.grantId && !existing) return ctx.throw(400, 'the grant of this interaction no longer exists');
    // Consent covers the client's delivery as the page showed it; when it changed since, the page is shown again.
    const { client } = await clientFor(details.params.client_id);
    if (!client) return ctx.throw(400, 'the client of this interaction no longer exists');
    const delivery = deliveryOf(client);
    const shown = (await readFormBody(ctx)).get('delivery');
    if (shown !== null && shown !== deliveryText(delivery)) {
      ctx.status = 303;
      return ctx.redirect(paths.interaction(details.uid));
    }
    // Under another delivery than the grant records, the consent starts a grant of its own (her earlier approvals
    // carried over but where they travel on a channel that now sends more): codes and tokens of the earlier grant end
    // with it (oidc-provider binds them to the session's grant).
    const recorded = existing && recordedDelivery(existing);
    const kept = existing && recorded && deliveryText(recorded) === deliveryText(delivery) ? existing : undefined;
    const before = kept && { scope: kept.getOIDCScope(), names: [...kept.getOIDCClaims()] };
    const grant = kept ?? new provider.Grant({ accountId, clientId: client.clientId });
    if (existing && !kept) {
      grant.addOIDCScope(existing.getOIDCScope());
      grant.addOIDCClaims(carriedOver(existing, delivery));
    }
    if (promptDetails.missingOIDCScope) grant.addOIDCScope(promptDetails.missingOIDCScope.join(' '));
    if (promptDetails.missingOIDCClaims) grant.addOIDCClaims(promptDetails.missingOIDCClaims);
    // A claim approved through its scope is approved by name too: named later where it travelled, it is not asked again.
    grant.addOIDCClaims(claimsForScope(grant.getOIDCScope()));
    // Each verified claim and detail the page showed is recorded on its own, and where each claim travels.
    const claims = parseJsonObject(stringParam(details.params.claims) ?? '');
    const verified = verifiedGrantNamesOf(claims);
    grant.addOIDCClaims(verified);
    const requestNames = [
      ...verified,
      ...consentGrantNames(claims, options.deliverableClaims, stringParam(details.params.scope), scopeChannel(client, options.includeScopesInUserInfo), grantedOf(grant)),
    ];
    grant.addOIDCClaims(requestNames);
    recordDelivery(grant, delivery);
    if (before) await undo.extending(details, before, grant, shownOn(details, promptDetails, claims, requestNames));
    await undo.withdraw(details, false);
    const grantId = await grant.save();
    await finish(ctx, { consent: kept ? {} : { grantId } });
  });

  router.post('/:uid/abort', sameOrigin, async (ctx) => {
    await undo.withdraw(await interactionOf(ctx), true);
    await finish(ctx, { error: 'access_denied', error_description: 'the end-user denied the request' });
  });

  return router;
}
