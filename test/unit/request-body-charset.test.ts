import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as querystring from 'node:querystring';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Koa from 'koa';

import { silentLogger } from '../../lib/index.js';
import { normalizeProviderRequests } from '../../lib/provider/request-normalizer.js';
import { hashClientSecret } from '../../lib/registration/client-secrets.js';

/**
 * The request normalizer judges a form body decoded in the charset its Content-Type names, and hands on what it judged.
 * A reader after it that honours the charset it is handed (as oidc-provider's body parser means to: it passes
 * `ctx.charset`, which Koa 3 happens not to define) must see that same text, not the bytes read again in the charset
 * the client named.
 */
describe('a form body in another charset reaches the provider as the text that was judged', () => {
  const app = new Koa();
  app.use(normalizeProviderRequests(silentLogger, [], 'http://127.0.0.1/oidc/v1'));
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    ctx.body = { fields: { ...querystring.parse(new TextDecoder(ctx.request.charset || 'utf-8').decode(Buffer.concat(chunks))) } };
  });
  const server = app.listen(0, '127.0.0.1');
  beforeAll(() => new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve()))));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** What the reader after the normalizer parsed from `body` posted as `contentType`. */
  const read = (contentType: string, body: Buffer): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const { port } = server.address() as AddressInfo;
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/token', headers: { 'content-type': contentType, 'content-length': body.length } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { fields: Record<string, unknown> }).fields));
      });
      req.on('error', reject);
      req.end(body);
    });

  const SECRET = 'the-client-secret';
  const STORED = hashClientSecret(SECRET);

  it('attack: a UTF-16LE body whose characters are the UTF-8 bytes of UTF-16LE text carrying the stored hash as client_secret: the reader sees what the normalizer saw (no client_secret), never the hash unhashed', async () => {
    const smuggled = `grant_type=authorization_code&client_id=rp&client_secret=${encodeURIComponent(STORED)}&login_hint=her%40example.com`;
    // The normalizer decodes UTF-16LE into NUL-interleaved text it finds nothing in, and would hand on its UTF-8 bytes:
    // exactly `smuggled` in UTF-16LE, for a reader honouring the charset still named.
    const judged = Buffer.from(smuggled, 'utf16le').toString('utf8');
    for (const charset of ['utf-16le', 'UTF-16LE', '"utf-16le"']) {
      const fields = await read(`application/x-www-form-urlencoded; charset=${charset}`, Buffer.from(judged, 'utf16le'));
      expect({ charset, fields }).toEqual({ charset, fields: { ...querystring.parse(judged) } });
    }
  });

  it('honest: an ISO-8859-1 body keeps its letters, and its client_secret is hashed, as a UTF-8 body does', async () => {
    const text = `grant_type=authorization_code&client_id=rp&client_secret=${SECRET}&state=caf\u00e9`;
    const expected = { grant_type: 'authorization_code', client_id: 'rp', client_secret: STORED, state: 'caf\u00e9' };
    expect(await read('application/x-www-form-urlencoded; charset=iso-8859-1', Buffer.from(text, 'latin1'))).toEqual(expected);
    expect(await read('application/x-www-form-urlencoded; charset=utf-8', Buffer.from(text, 'utf8'))).toEqual(expected);
    expect(await read('application/x-www-form-urlencoded', Buffer.from(text, 'utf8'))).toEqual(expected);
  });

  it('honest: an ISO-8859-1 body the normalizer leaves unchanged keeps its letters too', async () => {
    const text = 'grant_type=authorization_code&client_id=rp&state=caf\u00e9';
    expect(await read('application/x-www-form-urlencoded; charset=iso-8859-1', Buffer.from(text, 'latin1'))).toEqual({ grant_type: 'authorization_code', client_id: 'rp', state: 'caf\u00e9' });
  });
});
