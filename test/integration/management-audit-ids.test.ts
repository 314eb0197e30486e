import { afterEach, describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import type { SvcStore } from '../../adapters/store.js';
import { StoreUnavailableError } from '../../lib/errors.js';
import { capturingLogger } from '../helpers/logs.js';
import { managementCalls } from '../helpers/management-calls.js';
import { appPerSuite } from '../helpers/suite-app.js';

const USER = 'operator';
const PASSWORD = 'audit-password-123456';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const M = '/oidc/v1/management';
/** What an operator might paste by mistake where a client id belongs. */
const TOKEN = 'rat-Zk3v9QpL2mN8xW4yT6uR1sE5oA7cB0dF';

/** The healthy store's 404 and a client's own id: test/integration/management-toolbox.test.ts. */
describe('an id that names no client stays out of every log line, whatever the answer (a token pasted in the wrong place)', () => {
  describe('a store without an inventory (documented 501 not_supported)', () => {
    const { logger, lines } = capturingLogger();
    const full = createMemoryStore();
    // A custom store passed in code, as the toolbox documents: everything but the inventory.
    const store: SvcStore = {
      adapter: full.adapter,
      unconsume: full.unconsume.bind(full),
      insert: full.insert.bind(full),
      attempts: full.attempts,
      ping: full.ping.bind(full),
      close: full.close.bind(full),
    };
    const running = appPerSuite({ logger, store, properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true } });
    const call = managementCalls(running, AUTH);

    it.each([
      ['POST', `/clients/${TOKEN}/revoke-grants`, undefined],
      ['DELETE', `/clients/${TOKEN}`, undefined],
      ['POST', '/subjects/revoke', `sub=demo-0001&client_id=${TOKEN}`],
    ])('%s %s: 501, and the pasted token is in no log line', async (method, path, form) => {
      lines.length = 0;
      const res = await call(method, `${M}${path}`, form ? { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {});
      expect([res.status, res.body.error]).toEqual([501, 'not_supported']);
      const audit = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'management_audit');
      expect(audit).toHaveLength(1);
      expect(lines.join('\n')).not.toContain(TOKEN);
    });
  });

  describe('a store outage while the id is looked up', () => {
    const { logger, lines } = capturingLogger();
    const full = createMemoryStore();
    let clientReadsFail = false;
    const store: SvcStore = {
      adapter: (model) => {
        const inner = full.adapter(model);
        if (model !== 'Client') return inner;
        return new Proxy(inner, {
          get(target, prop, receiver) {
            if (prop === 'find' && clientReadsFail) return async () => Promise.reject(new StoreUnavailableError());
            const value = Reflect.get(target, prop, receiver) as unknown;
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        });
      },
      unconsume: full.unconsume.bind(full),
      insert: full.insert.bind(full),
      attempts: full.attempts,
      inventory: full.inventory,
      ping: full.ping.bind(full),
      close: full.close.bind(full),
    };
    const running = appPerSuite({ logger, store, properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true } });
    const call = managementCalls(running, AUTH);
    afterEach(() => {
      clientReadsFail = false;
    });

    it('GET /clients/{token} during an outage: 503, and the pasted token is in no log line', async () => {
      lines.length = 0;
      clientReadsFail = true;
      const res = await call('GET', `${M}/clients/${TOKEN}`);
      expect([res.status, res.body.error]).toEqual([503, 'server_error']);
      expect(lines.join('\n')).not.toContain(TOKEN);
    });
  });
});

