import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import type { ClaimModule } from '../../lib/claims/modules.js';
import { DEMO_TRUST_FRAMEWORK, DEMO_VERIFIED_OFFER } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { registerClient, registeredClientUrl, type RegisteredClient } from '../helpers/clients.js';
import { pkcePair, redeemCode, runCodeFlow, signIn, userData } from '../helpers/flow.js';

/** What the module answers now: well typed unless a test makes it otherwise. */
const HONEST = {
  claims: (): Record<string, unknown> => ({ given_name: 'Erika', email_verified: true }),
  records: (): unknown => [{ verification: { trust_framework: DEMO_TRUST_FRAMEWORK, time: null }, claims: { given_name: 'Erika', family_name: null } }],
};

describe('a claim module answering a value of another type than its claim has fails the request, named, never its value', () => {
  let answer = { ...HONEST };
  const sloppy: ClaimModule = {
    name: 'sloppy',
    provides: ['given_name', 'email_verified'],
    resolve: (_accountId, claims) => Object.fromEntries(Object.entries(answer.claims()).filter(([name]) => claims.includes(name))),
    verified: { offer: DEMO_VERIFIED_OFFER, resolve: () => answer.records() as [] },
  };
  const lines: string[] = [];
  const capture = (level: string) => (event: string, fields?: Record<string, unknown>): void => void lines.push(JSON.stringify({ level, event, ...fields }));
  let running: RunningApp;
  let rsa: RegisteredClient;

  beforeAll(async () => {
    running = await startApp({ claimModules: [sloppy], logger: { info: capture('info'), warn: capture('warn'), error: capture('error') } });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  /** Signs in for `claims`, then redeems the code and calls UserInfo with the module answering `during`. */
  const answered = async (claims: unknown, during: Partial<typeof HONEST>) => {
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(registeredClientUrl(running.issuer, rsa, { code_challenge: challenge, claims: JSON.stringify(claims) }));
    answer = { ...HONEST, ...during };
    lines.length = 0;
    try {
      const token = await redeemCode(running.issuer, rsa.metadata, callbackUrl.searchParams.get('code') as string, verifier);
      const userinfo = typeof token.body.access_token === 'string' ? await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${token.body.access_token}` } }) : undefined;
      return { token: [token.status, token.body.error], userinfo: userinfo && [userinfo.status, ((await userinfo.json().catch(() => ({}))) as { error?: string }).error] };
    } finally {
      answer = { ...HONEST };
    }
  };
  const failures = (): unknown[] => lines.filter((l) => l.includes('"server_error"')).map((l) => JSON.parse(l) as Record<string, unknown>).map((l) => [l.name, l.plugin, l.cause_name, l.cause_code]);

  it('attack: a verified record whose trust framework is a database row is a server_error of that module in UserInfo', async () => {
    const verified = { userinfo: { verified_claims: { verification: { trust_framework: null }, claims: { given_name: null } } } };
    const out = await answered(verified, { records: () => [{ verification: { trust_framework: { id: 7, tax_id: 'SENTINEL-TAX' } }, claims: { given_name: 'Erika' } }] });
    expect(out).toEqual({ token: [200, undefined], userinfo: [500, 'server_error'] });
    expect(failures()).toEqual([['ClaimModuleError', 'sloppy', 'ClaimModuleAnswerInvalid', 'trust_framework']]);
    expect(lines.join('\n')).not.toMatch(/SENTINEL|Erika/);
  });

  it('attack: a first name that carries a whole record is a server_error of that module at the token endpoint', async () => {
    const out = await answered({ id_token: { given_name: null } }, { claims: () => ({ given_name: { first: 'Erika', tax_id: 'SENTINEL-TAX' } }) });
    expect(out).toEqual({ token: [500, 'server_error'], userinfo: undefined });
    expect(failures()).toEqual([['ClaimModuleError', 'sloppy', 'ClaimModuleAnswerInvalid', 'given_name']]);
    expect(lines.join('\n')).not.toMatch(/SENTINEL|Erika/);
  });

  it('honest: the same module answering in type delivers, a null member as one she lacks', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, {
      configure: rsa.configure,
      params: { claims: JSON.stringify({ id_token: { given_name: null, email_verified: null }, userinfo: { verified_claims: { verification: { trust_framework: null, time: null }, claims: { given_name: null, family_name: null } } } }) },
    });
    expect(userData(flow.claims)).toEqual({ given_name: 'Erika', email_verified: true });
    expect(userData(flow.userinfo)).toEqual({ verified_claims: { verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { given_name: 'Erika' } } });
  });
});
