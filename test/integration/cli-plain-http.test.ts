import { createServer, type IncomingHttpHeaders } from 'node:http';
import { hostname } from 'node:os';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { isLoopbackHost } from '../../lib/net/addresses.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { runCli as cli } from '../helpers/cli.js';

const PASSWORD = 'plain-http-password-123';

describe('the command line sends credentials in clear text only to the loopback interface', () => {
  const running = appPerSuite({ properties: { 'svc.management.password': PASSWORD } });
  // A plain-http listener on every interface, reached by this machine's own name (not a loopback name).
  const heard: IncomingHttpHeaders[] = [];
  const listener = createServer((req, res) => {
    heard.push(req.headers);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"clients":[]}');
  });
  let remote = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => listener.listen(0, '::', resolve));
    const { port } = listener.address() as { port: number };
    // A machine named localhost has no such name: then one that resolves nowhere (refused before any lookup all the same).
    remote = `http://${isLoopbackHost(hostname()) ? 'svc-connect.invalid' : hostname()}:${port}`;
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  it('attack: an operator who forgets the s in --url (or SVC_BASE_URL) sends neither the management password nor an initial access token over the wire: exit 2, naming https', async () => {
    const runs = [
      await cli(['clients', 'list', '--url', remote], { SVC_MANAGEMENT_PASSWORD: PASSWORD }),
      await cli(['invite', '--print'], { SVC_BASE_URL: remote, SVC_MANAGEMENT_PASSWORD: PASSWORD }),
      await cli(['register', '--url', remote, '--redirect-uri', 'https://rp.example/cb'], { SVC_INITIAL_ACCESS_TOKEN: 'initial-access-token-value' }),
    ];
    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('use https');
      expect(run.stderr).not.toContain(PASSWORD);
    }
    expect(heard).toEqual([]);
  });

  it('attack: a loopback front (or any provider) that redirects the command to plain http elsewhere gets no request body there: her address stays off the wire', async () => {
    const front = createServer((req, res) => res.writeHead(307, { location: `${remote}${req.url ?? '/'}` }).end());
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const before = heard.length;
      const run = await cli(['invite', '--email', 'her@example.com', '--url', `http://127.0.0.1:${(front.address() as { port: number }).port}`], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('HTTP 307');
      expect(run.stdout).not.toContain('her@example.com');
      expect(heard.length).toBe(before);
    } finally {
      await new Promise<void>((resolve) => front.close(() => resolve()));
    }
  });

  it('honest: a name under localhost keeps its Host header, by which a local reverse proxy picks the app', async () => {
    const before = heard.length;
    const { port } = listener.address() as { port: number };
    const run = await cli(['clients', 'list', '--json', '--url', `http://app.localhost:${port}`], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
    expect(run.code).toBe(0);
    expect(heard.slice(before).map((headers) => headers.host)).toEqual([`app.localhost:${port}`]);
  });

  it('honest: http to localhost or a loopback address still reaches the provider; https anywhere passes the check', async () => {
    const port = new URL(running.baseUrl).port;
    // app.localhost resolves nowhere here: it reaches the provider only because it is never asked of DNS (RFC 6761 6.3),
    // whose answer could send the password off the machine.
    for (const host of ['localhost', 'app.localhost', 'APP.LOCALHOST.', '127.0.0.1', '[::1]']) {
      const listed = await cli(['clients', 'list', '--json', '--url', `http://${host}:${port}`], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
      if (host === '[::1]' && listed.stderr.includes('cannot reach')) continue; // the provider may listen on IPv4 only
      expect(listed).toMatchObject({ code: 0 });
    }
    const far = await cli(['clients', 'list', '--url', 'https://svc-connect.invalid'], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
    expect(far.code).toBe(1);
    expect(far.stderr).toContain('cannot reach https://svc-connect.invalid');
  });
});
