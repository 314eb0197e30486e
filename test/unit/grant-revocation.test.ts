import { describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { GRANT_REVOCATION_MODEL, markGrantRevoked, markedGrantRevocations } from '../../lib/management/grant-revocation.js';
import { refOf } from '../../adapters/inventory.js';
import { decorateAdapter } from '../../adapters/store.js';

describe('grant revocation marks', () => {
  it('a grant loaded before its revocation and written back after is removed again (invalid_grant)', async () => {
    const store = createMemoryStore();
    const inner = store.adapter('Grant');
    const grants = decorateAdapter(inner, markedGrantRevocations(inner, store.adapter(GRANT_REVOCATION_MODEL)));
    await grants.upsert('g-1', { accountId: 'a', clientId: 'c' }, 600);
    const loaded = await grants.find('g-1');
    await markGrantRevoked(store.adapter(GRANT_REVOCATION_MODEL), refOf('g-1'));
    await inner.destroy('g-1');
    await expect(grants.upsert('g-1', { ...loaded }, 600)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(await inner.find('g-1')).toBeUndefined();
  });

  it('an unrevoked grant is written as is (honest twin)', async () => {
    const store = createMemoryStore();
    const inner = store.adapter('Grant');
    const grants = decorateAdapter(inner, markedGrantRevocations(inner, store.adapter(GRANT_REVOCATION_MODEL)));
    await grants.upsert('g-2', { accountId: 'a', clientId: 'c' }, 600);
    await grants.upsert('g-2', { accountId: 'a', clientId: 'c', openid: { scope: 'openid' } }, 600);
    expect(await inner.find('g-2')).toMatchObject({ openid: { scope: 'openid' } });
  });
});
