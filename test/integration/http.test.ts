import { describe, expect, it } from '@jest/globals';

import { createMemoryStore, type SvcStore } from '../../lib/index.js';
import { startApp } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';

describe('health, readiness, headers and error rendering (C2)', () => {
  const running = appPerSuite();

  it('answers /healthz with 200 {"status":"ok"}', async () => {
    const response = await fetch(`${running.baseUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200 while the store answers', async () => {
    const response = await fetch(`${running.baseUrl}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready' });
  });

  it('answers /readyz with 503 JSON when the store does not answer', async () => {
    const memory = createMemoryStore();
    const failing: SvcStore = { ...memory, ping: () => Promise.reject(new Error('down')) };
    const other = await startApp({ store: failing });
    try {
      const response = await fetch(`${other.baseUrl}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as Record<string, string>;
      expect(body.error).toBe('store_unavailable');
      expect(JSON.stringify(body)).not.toContain('down');
    } finally {
      await other.close();
    }
  });

  it('sets security headers on every response', async () => {
    for (const path of ['/healthz', '/oidc/v1/.well-known/openid-configuration', '/oidc/v1/jwks']) {
      const response = await fetch(`${running.baseUrl}${path}`);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('renders an unknown interaction as a JSON error without internals', async () => {
    const response = await fetch(`${running.baseUrl}/oidc/v1/interaction/does-not-exist`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, string>;
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toBe('interaction session id cookie not found');
  });

  it('answers a bad token request with OAuth JSON', async () => {
    const response = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=x',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
  });
});
