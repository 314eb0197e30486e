import { describe, expect, it } from '@jest/globals';

import { publicPathsOf } from '../../lib/settings/paths.js';

describe('public paths, derived from svc.base-url once', () => {
  it('at the root and below a path, with or without a trailing slash', () => {
    expect(publicPathsOf('http://localhost:3000')).toEqual(
      expect.objectContaining({ baseUrl: 'http://localhost:3000', origin: 'http://localhost:3000', basePath: '', issuer: 'http://localhost:3000/oidc/v1', providerPath: '/oidc/v1' }),
    );
    for (const base of ['https://example.com/auth', 'https://example.com/auth/']) {
      const paths = publicPathsOf(base);
      expect([paths.baseUrl, paths.origin, paths.basePath, paths.issuer, paths.providerPath]).toEqual([
        'https://example.com/auth',
        'https://example.com',
        '/auth',
        'https://example.com/auth/oidc/v1',
        '/auth/oidc/v1',
      ]);
      expect(paths.interaction('abc')).toBe('/auth/oidc/v1/interaction/abc');
    }
  });

  it('an interaction id cannot leave its page: it is one encoded path segment', () => {
    const paths = publicPathsOf('https://example.com');
    expect(paths.interaction('../../management/invite_client')).toBe('/oidc/v1/interaction/..%2F..%2Fmanagement%2Finvite_client');
    expect(paths.interaction('a?b#c')).toBe('/oidc/v1/interaction/a%3Fb%23c');
  });
});
