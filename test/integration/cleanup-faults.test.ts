import { describe, expect, it } from '@jest/globals';

import { decorateAdapter, type SvcStore } from '../../adapters/store.js';
import { createStore, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { manage, register } from '../helpers/registration.js';
import { capturingLogger } from '../helpers/logs.js';

/**
 * Issue 13, item 7: once a success is decided, nothing after it turns it into an error. The fault is
 * injected (a real store cannot be made to fail one `destroy` on demand): every `destroy` of a
 * single-use token fails. The answers stay 201/200, the failure is logged without the token, and the
 * token stays spent because it was claimed in the store before the request was served.
 */
function failingDestroys(inner: SvcStore): SvcStore {
  return {
    ...inner,
    adapter(model) {
      const adapter = inner.adapter(model);
      if (model !== 'InitialAccessToken' && model !== 'RegistrationAccessToken') return adapter;
      return decorateAdapter(adapter, {
        destroy: async () => {
          throw Object.assign(new Error('injected: connection reset'), { code: 'ECONNRESET' });
        },
      });
    },
    attempts: inner.attempts,
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}

describe('clean-up failures after a success', () => {
  const { logger, lines } = capturingLogger();

  const running = appPerSuite(() => ({ logger, store: failingDestroys(createStore(loadSettings({ env: {}, properties: {} }).redis)) }));

  it('a registration whose token cannot be deleted still answers 201, logs it, and the token does not register again', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const created = await register(running, { redirect_uris: ['https://rp.example/cb'] }, token);
    expect(created.status).toBe(201);
    expect(created.body.client_id).toEqual(expect.any(String));
    const again = await register(running, { redirect_uris: ['https://rp.example/cb'] }, token);
    expect([again.status, again.body.error]).toEqual([401, 'invalid_token']);
    const failure = lines.find((l) => l.includes('"e":"token_cleanup_failed"') && l.includes('InitialAccessToken'));
    expect(failure).toBeDefined();
    expect(failure).toContain('"code":"ECONNRESET"');
    expect(lines.join('\n')).not.toContain(token);
  });

  it('a read whose old token cannot be deleted still answers 200 with the next token; the old one is spent', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const created = await register(running, { redirect_uris: ['https://rp.example/cb'] }, token);
    const url = created.body.registration_client_uri as string;
    const rat = created.body.registration_access_token as string;
    const read = await manage(url, 'GET', rat);
    expect(read.status).toBe(200);
    const next = read.body.registration_access_token as string;
    expect(next).toEqual(expect.any(String));
    expect((await manage(url, 'GET', rat)).status).toBe(401);
    expect((await manage(url, 'GET', next)).status).toBe(200);
    expect(lines.some((l) => l.includes('"e":"token_cleanup_failed"') && l.includes('destroy RegistrationAccessToken'))).toBe(true);
    expect(lines.join('\n')).not.toContain(rat);
  });

  it('an update and a delete whose old token cannot be deleted still answer 200 and 204; the old token is spent', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const created = await register(running, { redirect_uris: ['https://rp.example/cb'] }, token);
    const url = created.body.registration_client_uri as string;
    const id = created.body.client_id as string;
    const rat = created.body.registration_access_token as string;
    const before = lines.length;
    const updated = await manage(url, 'PUT', rat, { client_id: id, redirect_uris: ['https://rp.example/other'] });
    expect(updated.status).toBe(200);
    expect(updated.body.redirect_uris).toEqual(['https://rp.example/other']);
    expect((await manage(url, 'GET', rat)).status).toBe(401);
    const next = updated.body.registration_access_token as string;
    expect((await manage(url, 'DELETE', next)).status).toBe(204);
    expect(await running.app.svc.provider.Client.find(id)).toBeUndefined();
    expect(lines.slice(before).filter((l) => l.includes('"e":"token_cleanup_failed"')).length).toBeGreaterThanOrEqual(2);
  });
});
