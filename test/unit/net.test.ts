import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { describe, expect, it } from '@jest/globals';

import { fetchDocument, OutboundFetchError } from '../../lib/index.js';
import { isForbiddenAddress } from '../../lib/net/addresses.js';

describe('isForbiddenAddress (C11)', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '::1', '::', 'fc00::1', 'fd00:ec2::254', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'ff02::1', 'not-an-ip',
  ])('forbids %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('fetchDocument (C11)', () => {
  const strict = { allowPrivateNetwork: false };

  it('refuses http', async () => {
    await expect(fetchDocument('http://rp.example/jwks', strict)).rejects.toThrow('must use https');
  });

  it('refuses private and loopback targets before connecting', async () => {
    for (const url of ['https://127.0.0.1/x', 'https://[::1]/x', 'https://10.0.0.1/x', 'https://169.254.169.254/x', 'https://localhost/x']) {
      await expect(fetchDocument(url, strict)).rejects.toBeInstanceOf(OutboundFetchError);
    }
  });

  it('refuses credentials in the URL', async () => {
    await expect(fetchDocument('https://user:pw@rp.example/x', strict)).rejects.toThrow('must not carry credentials');
  });

  it('follows same-host redirects and stops at body and time limits when private networks are allowed', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/hop') {
        res.statusCode = 301;
        res.setHeader('location', '/doc');
        res.end();
      } else if (req.url === '/doc') res.end('{"ok":true}');
      else if (req.url === '/big') res.end('x'.repeat(2048));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const doc = await fetchDocument(`${base}/hop`, { allowPrivateNetwork: true });
      expect(doc.body.toString()).toBe('{"ok":true}');
      await expect(fetchDocument(`${base}/big`, { allowPrivateNetwork: true, maxBytes: 1024 })).rejects.toThrow('larger than 1024 bytes');
      await expect(fetchDocument(`${base}/never`, { allowPrivateNetwork: true, timeoutMs: 300 })).rejects.toThrow('timed out');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
