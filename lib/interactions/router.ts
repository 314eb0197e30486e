import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';

import { readFormBody } from '../http/form-body.js';
import { sendPage } from '../http/html.js';
import { interactionPath, PROVIDER_PATH } from '../provider/paths.js';
import type { Authenticator } from './authenticator.js';
import { consentPage, loginPage } from './pages.js';

/** What the interactions router needs. */
export interface InteractionsOptions {
  provider: Provider;
  authenticator: Authenticator;
  baseUrl: string;
}

function originOf(uri: unknown): string | undefined {
  if (typeof uri !== 'string') return undefined;
  try {
    return new URL(uri).origin;
  } catch {
    return undefined;
  }
}

/**
 * The login and consent pages under `/oidc/v1/interaction/{uid}` (C8): GET shows the page the
 * current prompt needs, POST `/login` signs in, POST `/confirm` grants, POST `/abort` denies
 * (`access_denied` to the client).
 */
export function createInteractionsRouter(options: InteractionsOptions): Router {
  const { provider, authenticator, baseUrl } = options;
  const router = new Router({ prefix: `${PROVIDER_PATH}/interaction` });

  const finish = async (ctx: Context, result: InteractionResults): Promise<void> => {
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.status = 303;
    ctx.redirect(returnTo);
  };

  const clientNameFor = async (clientId: unknown): Promise<string> => {
    const client = typeof clientId === 'string' ? await provider.Client.find(clientId) : undefined;
    return client?.clientName ?? (typeof clientId === 'string' ? clientId : 'the application');
  };

  router.get('/:uid', async (ctx) => {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const path = interactionPath(baseUrl, details.uid);
    const clientName = await clientNameFor(details.params.client_id);
    const redirectOrigin = originOf(details.params.redirect_uri);
    if (details.prompt.name === 'login') {
      sendPage(ctx, loginPage({ action: `${path}/login`, clientName, redirectOrigin }));
      return;
    }
    const promptDetails = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    sendPage(
      ctx,
      consentPage({
        allowAction: `${path}/confirm`,
        denyAction: `${path}/abort`,
        clientName,
        scopes: promptDetails.missingOIDCScope ?? [],
        claims: promptDetails.missingOIDCClaims ?? [],
        redirectOrigin,
      }),
    );
  });

  router.post('/:uid/login', async (ctx) => {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.prompt.name !== 'login') ctx.throw(400, 'this interaction does not expect a login');
    const form = await readFormBody(ctx);
    const login = form.get('login') ?? '';
    const password = form.get('password') ?? '';
    const accountId = login && password ? await authenticator.authenticate(login, password) : undefined;
    if (!accountId) {
      const path = interactionPath(baseUrl, details.uid);
      const clientName = await clientNameFor(details.params.client_id);
      sendPage(ctx, loginPage({ action: `${path}/login`, clientName, failed: true, login, redirectOrigin: originOf(details.params.redirect_uri) }), 401);
      return;
    }
    await finish(ctx, { login: { accountId } });
  });

  router.post('/:uid/confirm', async (ctx) => {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const accountId = details.session?.accountId;
    if (details.prompt.name !== 'consent' || !accountId) {
      return ctx.throw(400, 'this interaction does not expect a consent');
    }
    const promptDetails = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    if (!grant) return ctx.throw(400, 'the grant of this interaction no longer exists');
    if (promptDetails.missingOIDCScope) grant.addOIDCScope(promptDetails.missingOIDCScope.join(' '));
    if (promptDetails.missingOIDCClaims) grant.addOIDCClaims(promptDetails.missingOIDCClaims);
    const grantId = await grant.save();
    await finish(ctx, { consent: details.grantId ? {} : { grantId } });
  });

  router.post('/:uid/abort', async (ctx) => {
    await provider.interactionDetails(ctx.req, ctx.res);
    await finish(ctx, { error: 'access_denied', error_description: 'the end-user denied the request' });
  });

  return router;
}
