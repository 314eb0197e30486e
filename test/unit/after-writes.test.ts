import { describe, expect, it } from '@jest/globals';

import { afterWrites, type SvcStore } from '../../adapters/store.js';

const mark = async (): Promise<string> => 'revoked';

describe('afterWrites: a mark read after the request writes', () => {
  it('attack: a store whose flush resolves without running the read (written to take none) fails the check, never "no mark"', async () => {
    const store: Pick<SvcStore, 'flush'> = { flush: (async () => undefined) as unknown as SvcStore['flush'] };
    await expect(afterWrites(store, mark)).rejects.toThrow('the store flushed without running the read it was given');
  });

  it('attack: a store whose flush runs the read but resolves something else answers what was read', async () => {
    const store: Pick<SvcStore, 'flush'> = { flush: (async (read: () => Promise<unknown>) => void (await read())) as unknown as SvcStore['flush'] };
    expect(await afterWrites(store, mark)).toBe('revoked');
  });

  it('honest: a store that defers nothing (no flush) and one that runs the read both answer it', async () => {
    expect(await afterWrites({}, mark)).toBe('revoked');
    expect(await afterWrites({ flush: (read) => read() }, mark)).toBe('revoked');
  });
});
