import { describe, expect, it } from '@jest/globals';

import type { LogFields, Logger } from '../../lib/logger.js';
import { appPerSuite } from '../helpers/suite-app.js';

/**
 * Route labels are the template of the route a request reached, also when a check that guards the
 * route's router (the same-origin check of our form posts) answers before the route's handler runs.
 */
describe('route labels of refused form posts', () => {
  const lines: Record<string, unknown>[] = [];
  const logger: Logger = {
    info: (event: string, fields?: LogFields) => void lines.push({ event, ...fields }),
    warn: (event: string, fields?: LogFields) => void lines.push({ event, ...fields }),
    error: (event: string, fields?: LogFields) => void lines.push({ event, ...fields }),
  };
  const running = appPerSuite({ logger, properties: { 'svc.metrics.enabled': true } });

  it('labels a cross-site POST to the login, consent and demo forms by the route it was sent to, never by a router pattern', async () => {
    const crossSite = { method: 'POST', headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' }, body: 'login=a&password=b' };
    const sent: [string, string][] = [
      ['label-login-refused', `${running.issuer}/interaction/uid-5f2a9/login`],
      ['label-confirm-refused', `${running.issuer}/interaction/uid-5f2a9/confirm`],
      ['label-demo-refused', `${running.baseUrl}/oidcdemo/login`],
    ];
    const statuses: number[] = [];
    const ids = new Map<string, string | null>();
    for (const [id, url] of sent) {
      const response = await fetch(url, crossSite);
      statuses.push(response.status);
      ids.set(id, response.headers.get('x-request-id'));
    }
    expect(statuses).toEqual([403, 403, 403]);
    const routeOf = (id: string): unknown => lines.find((l) => l.event === 'request' && l.request_id === ids.get(id))?.route;
    expect(Object.fromEntries(sent.map(([id]) => [id, routeOf(id)]))).toEqual({
      'label-login-refused': '/oidc/v1/interaction/:uid/login',
      'label-confirm-refused': '/oidc/v1/interaction/:uid/confirm',
      'label-demo-refused': '/oidcdemo/login',
    });
    const metrics = await (await fetch(`${running.baseUrl}/metrics`)).text();
    const labels = [...metrics.matchAll(/^svc_http_requests_total\{route="([^"]*)"/gm)].map((m) => m[1]);
    expect(labels.filter((label) => /[()?\\$]/.test(label as string))).toEqual([]);
  });

  it('labels a request the layers before the oidc-provider router answer (an oversized token request, 413) by the provider route it was sent to', async () => {
    const response = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=${'a'.repeat(60 * 1024)}`,
    });
    expect(response.status).toBe(413);
    const line = lines.find((l) => l.event === 'request' && l.request_id === response.headers.get('x-request-id'));
    expect(line?.route).toBe('/oidc/v1/token');
  });
});
