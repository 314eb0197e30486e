import { connect } from 'node:net';

import { describe, expect, it } from '@jest/globals';

import { createHttpServer, MAX_REQUEST_HEAD_BYTES } from '../../lib/index.js';
import { appPerSuite } from '../helpers/suite-app.js';

/**
 * What the bundled server answers on a keep-alive connection that already carried an answered request: browsers and
 * HTTP client pools (fetch) send most requests on such a connection, so a head Node cannot read arrives there as
 * often as on a fresh one. Node's own handler answers it there (431, 400); the refusal as OAuth JSON must too.
 */
describe('request heads on a reused keep-alive connection (C2)', () => {
  const running = appPerSuite();

  /** Sends `first`, waits for its whole answer, then sends `second` on the same connection; everything the server wrote. */
  const secondOnSameConnection = (first: string, second: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const { port } = new URL(running.baseUrl);
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(first));
      let text = '';
      let sent = false;
      const done = (): void => resolve(text);
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (!sent && text.includes('{"status":"ok"}')) {
          sent = true;
          socket.write(second);
        }
      });
      socket.on('end', done).on('close', done).on('error', (err) => (text ? done() : reject(err)));
    });
  const healthz = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
  /** The answers in `text` after the first one (the health check's). */
  const afterFirst = (text: string): string => text.slice(text.indexOf('{"status":"ok"}') + '{"status":"ok"}'.length);
  const bodyOf = (answer: string): unknown => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

  it('a second request whose head is beyond MAX_REQUEST_HEAD_BYTES gets 431 as OAuth JSON, not a dropped connection', async () => {
    const text = await secondOnSameConnection(healthz, `GET /oidc/v1/authorize?x=${'a'.repeat(MAX_REQUEST_HEAD_BYTES)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const second = afterFirst(text);
    expect(second).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(second)).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('POST body or pushed (PAR)') });
  });

  it('a second request that is not valid HTTP gets 400 as OAuth JSON', async () => {
    const second = afterFirst(await secondOnSameConnection(healthz, 'GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n'));
    expect(second).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(second)).toEqual({ error: 'invalid_request', error_description: 'the request is not valid HTTP' });
  });

  it('honest: a response already partly written is never followed by a refusal in its middle', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let headWritten!: () => void;
    const written = new Promise<void>((resolve) => (headWritten = resolve));
    const server = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
      res.write('12345', () => headWritten());
      void held.then(() => res.end('67890'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      // The rest of the answer is held until the server has dealt with the malformed request: it closes the
      // connection, or writes something after the part already sent.
      const text = await new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
        let received = '';
        let partial = 0;
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
          if (partial && received.length > partial) resolve(received);
        });
        socket.on('close', () => resolve(received)).on('error', () => undefined);
        void written.then(() => {
          partial = received.length;
          socket.write('GET / HTTP/1.1\r\nHost x\r\n\r\n');
        });
      });
      release();
      expect(text).not.toContain('invalid_request');
      expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
