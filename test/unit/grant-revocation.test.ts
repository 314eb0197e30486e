import { describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { GRANT_REVOCATION_MODEL, markGrantRevoked, markedGrantRevocations } from '../../lib/management/grant-revocation.js';
import { refOf } from '../../adapters/inventory.js';
import { decorateAdapter } from '../../adapters/store.js';
import { DELETION_MODEL, tokensOfDeletedClients } from '../../lib/management/client-suspension.js';

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

describe('grants of deleted clients', () => {
  const grantsOf = (store: ReturnType<typeof createMemoryStore>) => {
    const inner = store.adapter('Grant');
    return { inner, grants: decorateAdapter(inner, tokensOfDeletedClients(inner, store.adapter(DELETION_MODEL), 'Grant')) };
  };

  it('attack: her consent saved after its client was deleted (the client loaded before) is removed again (invalid_grant)', async () => {
    const store = createMemoryStore();
    const { inner, grants } = grantsOf(store);
    await store.adapter(DELETION_MODEL).upsert('gone', { deleted_at: 1, deleted_by: 'client' }, 600);
    await expect(grants.upsert('g-3', { accountId: 'a', clientId: 'gone' }, 600)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(await inner.find('g-3')).toBeUndefined();
  });

  it('honest: a grant of another client is written while one is deleted', async () => {
    const store = createMemoryStore();
    const { inner, grants } = grantsOf(store);
    await store.adapter(DELETION_MODEL).upsert('gone', { deleted_at: 1, deleted_by: 'client' }, 600);
    await grants.upsert('g-4', { accountId: 'a', clientId: 'kept' }, 600);
    expect(await inner.find('g-4')).toMatchObject({ clientId: 'kept' });
  });
});
