import { describe, expect, it } from '@jest/globals';

import { freePort, startServerProcess, waitFor } from '../helpers/processes.js';

describe('the example server (npm start)', () => {
  it('serves discovery on the embedded defaults within 5 s, with no Redis or SMTP', async () => {
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port) });
    try {
      const response = await waitFor(`http://localhost:${port}/oidc/v1/.well-known/openid-configuration`, 5000);
      const doc = (await response.json()) as { issuer: string };
      expect(doc.issuer).toBe(`http://localhost:${port}/oidc/v1`);
      expect(server.output()).toContain(`listening on http://localhost:${port}`);
      expect(server.output()).toContain('"property":"svc.redis.url"');
    } finally {
      await server.stop();
    }
  });

  it('refuses to start with NODE_ENV=production on the defaults and names the properties to set', async () => {
    const server = startServerProcess({ NODE_ENV: 'production', PORT: String(await freePort()) });
    const code = await server.exited;
    expect(code).toBe(1);
    for (const property of ['svc.redis.url', 'svc.keys.file', 'svc.cookies.keys', 'svc.management.password', 'svc.mail.smtp-url']) {
      expect(server.output()).toContain(property);
    }
  });

  it('refuses to start on an unknown property, naming it', async () => {
    const server = startServerProcess({ SVC_REDIS_KEYPREFIX: 'x' });
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain('SVC_REDIS_KEYPREFIX');
  });
});
