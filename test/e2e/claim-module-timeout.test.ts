import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import type { ClaimModule } from '../../lib/claims/modules.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, pkcePair, redeemCode, signIn } from '../helpers/flow.js';

describe('a claim module that never answers does not hold the token endpoint or UserInfo (svc.claims.module-timeout-ms) [memory]', () => {
  const client = confidentialClient({ client_id: 'optout-rp', allow_unencrypted_userinfo: true });
  const lines: string[] = [];
  const capture = (level: string) => (event: string, fields?: Record<string, unknown>): void => void lines.push(JSON.stringify({ level, event, ...fields }));
  let hang = false;
  let running: RunningApp;

  beforeAll(async () => {
    const modules: ClaimModule[] = createDemoClaimModules().map((m) => ({
      ...m,
      resolve: (accountId: string, claims: readonly string[]) => (hang && m.provides.includes('email') ? new Promise<never>(() => undefined) : m.resolve(accountId, claims)),
    }));
    running = await startApp({
      clients: [client],
      claimModules: modules,
      logger: { info: capture('info'), warn: capture('warn'), error: capture('error') },
      properties: { 'svc.claims.module-timeout-ms': 50 },
    });
  });
  afterAll(async () => running.close());

  it('answers 500 server_error naming the module in the log, and the same code redeems once the module answers', async () => {
    const { verifier, challenge } = pkcePair();
    const claims = JSON.stringify({ userinfo: { email: null } });
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge, scope: 'openid profile email', claims }));
    const code = callbackUrl.searchParams.get('code') as string;
    hang = true;
    let token: Awaited<ReturnType<typeof redeemCode>>;
    try {
      token = await redeemCode(running.issuer, client, code, verifier);
    } finally {
      hang = false;
    }
    expect([token.status, token.body.error]).toEqual([500, 'server_error']);
    const logged = lines.filter((line) => line.includes('SVC_CLAIM_MODULE_FAILED')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.map((l) => [l.plugin, l.cause_name])).toContainEqual(['email', 'ClaimModuleTimeout']);
    const redeemed = await redeemCode(running.issuer, client, code, verifier);
    expect(redeemed.status).toBe(200);
    hang = true;
    let answer: Response;
    try {
      answer = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${redeemed.body.access_token as string}` } });
    } finally {
      hang = false;
    }
    expect([answer.status, ((await answer.json()) as { error?: string }).error]).toEqual([500, 'server_error']);
    const again = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${redeemed.body.access_token as string}` } });
    expect([again.status, ((await again.json()) as { email?: string }).email]).toEqual([200, 'erika.mustermann@example.com']);
  });
});
