import { createHash } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules, type DemoPerson } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { type FlowResult, redirectParams, runCodeFlow, signIn, userData } from '../helpers/flow.js';
import { registerClient, type RegisteredClient, registeredClientUrl } from '../helpers/clients.js';
import { capturingLogger } from '../helpers/logs.js';
import { deletePrefix, dumpPrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';


/** Values unique to this suite, so that finding one (or a hash of one) anywhere means a leak. */
const V = {
  birthdate: '1971-02-19',
  email: 'value-sentinel-4d2a@example.test',
  name: 'VALUE-name-90c3',
  verifiedEmail: { email: 'value-sentinel-4d2a@example.test', verified_at: '2024-11-05T09:30:00Z' },
};

const PERSON: DemoPerson = {
  name: V.name,
  birthdate: V.birthdate,
  email: V.email,
  email_verified: true,
  verifiedEmail: V.verifiedEmail,
  verifiedMobile: { phone_number: '+49-VALUE-phone-11aa', verified_at: '2024-11-05T09:31:00Z' },
};

/** Every unkeyed hash a dump reader could compute from a guess of `value`, in every usual text form. */
function unkeyedForms(value: unknown): string[] {
  const canonical = (v: unknown): unknown =>
    v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])])) : v;
  const inputs = [...new Set([typeof value === 'string' ? value : JSON.stringify(value), JSON.stringify(value), JSON.stringify(canonical(value))])];
  const forms = [...inputs];
  for (const input of inputs) {
    for (const algorithm of ['sha256', 'sha1', 'md5']) {
      for (const encoding of ['hex', 'base64', 'base64url'] as const) forms.push(createHash(algorithm).update(input, 'utf8').digest(encoding));
    }
  }
  return forms;
}

describe('requested claim values through full flows on Redis (C5, issue 14)', () => {
  const prefix = testPrefix('claim-values');
  const { logger, lines } = capturingLogger();
  let running: RunningApp;
  let rsa: RegisteredClient;
  let matching: FlowResult;
  let denied: URLSearchParams;

  beforeAll(async () => {
    running = await startApp({
      logger,
      claimModules: createDemoClaimModules({ 'demo-0001': PERSON }),
      properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix },
    });
    rsa = await registerClient(running, 'rsa');
    matching = await runCodeFlow(running.issuer, rsa.metadata, {
      configure: rsa.configure,
      params: {
        claims: JSON.stringify({
          userinfo: {
            birthdate: { value: V.birthdate, essential: true },
            // Mobile comes first but has another value: the e-mail alternative is the one delivered.
            'svc.ver.[mobile.l2.api,email.l2]': { value: { verified_at: V.verifiedEmail.verified_at, email: V.verifiedEmail.email } },
          },
          id_token: { email: { value: V.email }, name: { value: 'Somebody Else' } },
        }),
      },
    });
    const url = registeredClientUrl(running.issuer, rsa, { state: 'st-values', claims: JSON.stringify({ userinfo: { birthdate: { value: '1900-01-01', essential: true } } }) });
    denied = redirectParams((await signIn(url)).callbackUrl.href);
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('delivers a claim whose value matches, omits one that does not, in both channels and for alternatives', () => {
    expect(userData(matching.userinfo)).toEqual({ birthdate: V.birthdate, 'svc.ver.email.l2': V.verifiedEmail });
    expect(userData(matching.claims)).toEqual({ email: V.email });
  });

  it('answers an essential claim whose value does not match with access_denied, as before', () => {
    expect({ error: denied.get('error'), description: denied.get('error_description'), state: denied.get('state') }).toEqual({
      error: 'access_denied',
      description: 'an essential claim is not available for this account',
      state: 'st-values',
    });
  });

  it('leaves neither a requested value nor any unkeyed hash of it in any key of the store, or in any log line', async () => {
    // The flows asked for these values (matching and not): the store holds their requests.
    const dump = await dumpPrefix(SHARED_REDIS_URL, prefix);
    const stored = [...dump].flat().join('\n');
    expect(dump.size).toBeGreaterThan(5);
    expect(stored).toContain('svc_mac'); // the requests were stored, with MACs in place of values
    const macs = [...stored.matchAll(/svc_mac\\*":\\*"([A-Za-z0-9_-]{16})/g)].map((m) => m[1] as string);
    expect(macs.length).toBeGreaterThan(0);
    const requested = [V.birthdate, V.email, 'Somebody Else', '1900-01-01', V.verifiedEmail];
    for (const value of requested) {
      for (const form of unkeyedForms(value)) {
        expect({ value, form, inStore: stored.includes(form), inLogs: lines.some((l) => l.includes(form)) }).toEqual({ value, form, inStore: false, inLogs: false });
      }
    }
    for (const mac of macs) expect({ mac, inLogs: lines.some((l) => l.includes(mac)) }).toEqual({ mac, inLogs: false });
  });
});
