import { describe, expect, it } from '@jest/globals';

import { newClientId } from '../../lib/registration/client-ids.js';

describe('newClientId: registered client ids', () => {
  it('never begin with "-" (a CLI argument would be read as an option: 1 in 64 of base64url ids did), are 128-bit base64url and distinct', () => {
    const ids = Array.from({ length: 20_000 }, newClientId);
    expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
    expect(ids.every((id) => /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
