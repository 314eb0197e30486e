import http, { createServer, type AgentOptions, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { createServer as createTcpServer, isIP, type AddressInfo, type Socket } from 'node:net';

import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';

import { OutboundFetchError } from '../../lib/index.js';
import { fetchDocument } from '../../lib/net/fetch.js';
import { isForbiddenAddress } from '../../lib/net/addresses.js';
import { providerFetch } from '../../lib/net/provider-fetch.js';
import { startDocServer } from '../helpers/registration.js';

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

/** IANA's IPv4 Special-Purpose Address Registry, plus multicast: written out here, independent of the code. */
const FORBIDDEN_V4: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.31.196.0', 24], ['192.52.193.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['192.175.48.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const v4ToInt = (a: string): number => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const intToV4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const inTable = (n: number): boolean => FORBIDDEN_V4.some(([net, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(v4ToInt(net) / 2 ** (32 - bits)));

/** Any address inside one of the ranges above. */
const forbiddenV4 = fc
  .tuple(fc.constantFrom(...FORBIDDEN_V4), fc.integer({ min: 0, max: 2 ** 32 - 1 }))
  .map(([[net, bits], host]) => intToV4(v4ToInt(net) + (bits === 32 ? 0 : host % 2 ** (32 - bits))));
const hextet = fc.integer({ min: 0, max: 0xffff });

/** The 8 hextets of an IPv6 address, written in one of the spellings a resolver or URL might use. */
function spell(parts: number[], how: 'compressed' | 'full' | 'padded-upper' | 'dotted' | 'dotted-compressed'): string {
  const hex = parts.map((p) => p.toString(16));
  const dotted = (): string => `${parts[6]! >> 8}.${parts[6]! & 255}.${parts[7]! >> 8}.${parts[7]! & 255}`;
  switch (how) {
    case 'compressed':
      return new URL(`http://[${hex.join(':')}]/`).hostname.slice(1, -1);
    case 'full':
      return hex.join(':');
    case 'padded-upper':
      return parts.map((p) => p.toString(16).padStart(4, '0').toUpperCase()).join(':');
    case 'dotted':
      return `${hex.slice(0, 6).join(':')}:${dotted()}`;
    case 'dotted-compressed': {
      // The longest run (two or more) of zero hextets among the first six becomes '::'.
      let best = [-1, 0];
      for (let i = 0; i < 6; i += 1) {
        let j = i;
        while (j < 6 && parts[j] === 0) j += 1;
        if (j - i > best[1]! && j - i >= 2) best = [i, j - i];
      }
      if (best[0]! < 0) return `${hex.slice(0, 6).join(':')}:${dotted()}`;
      const left = hex.slice(0, best[0]).join(':');
      const right = hex.slice(best[0]! + best[1]!, 6).join(':');
      return `${left}::${right ? `${right}:` : ''}${dotted()}`;
    }
  }
}
const spelling = fc.constantFrom('compressed' as const, 'full' as const, 'padded-upper' as const, 'dotted' as const, 'dotted-compressed' as const);
const split = (v4: string): [number, number] => {
  const n = v4ToInt(v4);
  return [n >>> 16, n & 0xffff];
};

describe('isForbiddenAddress: every special-purpose range and every spelling', () => {
  it.each([
    // IPv4-compatible ::/96 (deprecated), the reported bypass, in several spellings
    '::127.0.0.1', '::7f00:1', '0:0:0:0:0:0:7f00:1', '0000:0000:0000:0000:0000:0000:7F00:0001', '::8.8.8.8', '::808:808', '::a9fe:a9fe',
    // IPv4-mapped and IPv4-translated
    '::ffff:127.0.0.1', '::FFFF:7F00:1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:169.254.169.254', '::ffff:0a00:0001',
    '::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:808:808',
    // NAT64 (RFC 6052, RFC 8215), also for a public IPv4 address
    '64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '64:FF9B::A9FE:A9FE', '64:ff9b::808:808', '64:ff9b:1::1',
    // 6to4 and Teredo
    '2002:7f00:1::', '2002:a9fe:a9fe::1', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1', '2001:0:7f00:1::1',
    // unspecified, loopback, link-local with zone ids, unique-local, site-local, multicast
    '::', '::0', '0::0', '::1', '0:0:0:0:0:0:0:1', '0000:0000:0000:0000:0000:0000:0000:0001', 'fe80::1%eth0', 'fe80::1%1', 'FE80::1', 'febf::1',
    '2606:4700::1111%eth0', 'fc00::1', 'FD00:EC2::254', 'fec0::1', 'ff02::1', 'FF05::1:3',
    // discard-only, dummy, IETF protocol assignments, AMT, AS112, ORCHID, ORCHIDv2, drone tags, documentation, SRv6, benchmarking
    '100::1', '100:0:0:1::1', '2001:1::1', '2001:2::1', '2001:3::1', '2001:4:112::1', '2620:4f:8000::1', '2001:10::1', '2001:20::1',
    '2001:30::1', '2001:db8::1', '2001:DB8:85A3::8A2E:370:7334', '3fff::1', '3fff:fff::1', '5f00::1', '5f00:ffff::1',
    // outside 2000::/3 altogether (IETF reserved)
    '1::1', '4000::1', 'e000::1',
    // IPv4 special-purpose ranges not in the list above
    '192.0.0.8', '192.0.0.170', '192.0.2.1', '192.31.196.1', '192.52.193.1', '192.88.99.1', '192.175.48.1', '198.18.0.1', '198.19.255.255',
    '198.51.100.1', '203.0.113.1', '240.0.0.1', '100.127.255.255',
    // not an IP literal in the form node:net accepts (octal, hex, short forms)
    '0177.0.0.1', '0x7f.0.0.1', '127.1', '2130706433', '1.2.3.4%eth0', '', '[::1]',
  ])('forbids %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8', '1.1.1.1', '2606:4700::1111', '2606:4700:0:0:0:0:0:1111', '2606:4700:4700::1111', '2001:4860:4860::8888',
    '2A00:1450:4001:82B::200E', '2a00:1450:4001:082b:0000:0000:0000:200e', '::ffff:8.8.8.8', '::FFFF:808:808', '::ffff:0808:0808',
    '100.128.0.1', '192.0.1.1', '198.20.0.1', '2003::1',
  ])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it('judges every IPv4 address exactly as IANA\'s special-purpose table does, also in its IPv4-mapped form (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        const address = intToV4(n);
        expect(isForbiddenAddress(address)).toBe(inTable(n));
        expect(isForbiddenAddress(`::ffff:${address}`)).toBe(inTable(n));
      }),
      { numRuns: 2000 },
    );
  });

  it('forbids every IPv6 address that embeds a forbidden IPv4 address, in every form and spelling (fast-check)', () => {
    const embeddings = fc.oneof(
      forbiddenV4.map((a) => ({ form: 'mapped', parts: [0, 0, 0, 0, 0, 0xffff, ...split(a)] })),
      forbiddenV4.map((a) => ({ form: 'compatible', parts: [0, 0, 0, 0, 0, 0, ...split(a)] })),
      forbiddenV4.map((a) => ({ form: 'translated', parts: [0, 0, 0, 0, 0xffff, 0, ...split(a)] })),
      forbiddenV4.map((a) => ({ form: 'nat64', parts: [0x64, 0xff9b, 0, 0, 0, 0, ...split(a)] })),
      fc.tuple(forbiddenV4, fc.array(hextet, { minLength: 5, maxLength: 5 })).map(([a, rest]) => ({ form: '6to4', parts: [0x2002, ...split(a), ...rest] })),
      fc.tuple(forbiddenV4, fc.array(hextet, { minLength: 4, maxLength: 4 })).map(([a, rest]) => ({ form: 'teredo server', parts: [0x2001, 0, ...split(a), ...rest] })),
      fc.tuple(forbiddenV4, fc.array(hextet, { minLength: 4, maxLength: 4 })).map(([a, rest]) => ({
        form: 'teredo client',
        parts: [0x2001, 0, ...rest, ...split(a).map((h) => ~h & 0xffff)],
      })),
    );
    fc.assert(
      fc.property(embeddings, spelling, ({ parts }, how) => {
        const address = spell(parts, how);
        // A spelling node:net does not take as IPv6 would be forbidden for the wrong reason.
        expect([address, isIP(address), isForbiddenAddress(address)]).toEqual([address, 6, true]);
      }),
      { numRuns: 3000 },
    );
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

  it('names no address the provider\'s resolver answered for a name: its network stays its own (the URL is what the RP gets back)', async () => {
    const resolve = (): Promise<{ address: string; family: number }[]> => Promise.resolve([{ address: '2606:4700::1111', family: 6 }, { address: '10.20.30.40', family: 4 }]);
    const err = await fetchDocument('https://vault.corp.example/keys', { ...strict, resolve }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundFetchError);
    expect((err as Error).message).toBe('https://vault.corp.example/keys: resolves to a loopback, private, link-local or reserved address');
    // The RP's own literal comes back as it wrote it, in the URL, with the same rule.
    await expect(fetchDocument('https://[::ffff:a00:1]/keys', strict)).rejects.toThrow(/^https:\/\/\[::ffff:a00:1\]\/keys: resolves to a loopback, private, link-local or reserved address$/);
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

describe('fetchDocument: a response cut short settles the fetch', () => {
  /** A server writing `text` raw to every connection, then closing it unless `keepOpen`. */
  async function rawServer(text: string, keepOpen = false): Promise<{ base: string; close: () => void }> {
    const sockets = new Set<Socket>();
    const server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('data', () => {
        socket.write(text);
        if (!keepOpen) socket.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => {
        for (const socket of sockets) socket.destroy();
        server.close();
      },
    };
  }

  it.each([
    ['closes the connection in the middle of a body of declared length', 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"keys":', false, 'could not be fetched (the connection closed before the response ended)'],
    ['closes the connection before the last chunk', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"key\r\n', false, 'could not be fetched (the connection closed before the response ended)'],
    ['switches protocols and closes', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n', false, 'answered 101 Switching Protocols, which is no document'],
    ['switches protocols and keeps the connection open', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n', true, 'answered 101 Switching Protocols, which is no document'],
  ])('a server that %s fails the fetch, which never outlives its timeout', async (_name, text, keepOpen, reason) => {
    const server = await rawServer(text, keepOpen);
    try {
      await expect(fetchDocument(`${server.base}/jwks`, { allowPrivateNetwork: true, timeoutMs: 1000 })).rejects.toThrow(`${server.base}/jwks: ${reason}`);
    } finally {
      server.close();
    }
  });

  it.each([
    ['103 Early Hints before its 200', 'HTTP/1.1 103 Early Hints\r\nLink: </k>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"keys":[]}'],
    ['100 Continue before its 200', 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"keys":[]}'],
    ['a chunked body with trailers', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n5\r\n{"key\r\n6\r\ns":[]}\r\n0\r\nX-Sum: 1\r\n\r\n'],
    ['a declared body of exactly the size limit', 'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"keys":[]}'],
    ['an undeclared body of exactly the size limit', 'HTTP/1.0 200 OK\r\n\r\n{"keys":[]}'],
  ])('honest: %s is read whole', async (_name, text) => {
    const server = await rawServer(text);
    try {
      const doc = await fetchDocument(`${server.base}/jwks`, { allowPrivateNetwork: true, timeoutMs: 1000, maxBytes: 11 });
      expect([doc.status, doc.body.toString()]).toEqual([200, '{"keys":[]}']);
    } finally {
      server.close();
    }
  });

  it('a body one byte over the size limit, declared or not, fails the fetch', async () => {
    for (const text of ['HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{"keys":[]} ', 'HTTP/1.0 200 OK\r\n\r\n{"keys":[]} ']) {
      const server = await rawServer(text);
      try {
        await expect(fetchDocument(`${server.base}/jwks`, { allowPrivateNetwork: true, timeoutMs: 1000, maxBytes: 11 })).rejects.toThrow('response larger than 11 bytes');
      } finally {
        server.close();
      }
    }
  });

  it('a body trickled a byte at a time (slowloris) fails the fetch at its whole-request timeout, and the connection is closed', async () => {
    let closed: Promise<void> = Promise.resolve();
    const server = createTcpServer((socket) => {
      socket.on('error', () => undefined);
      closed = new Promise((resolve) => socket.on('close', () => resolve()));
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n');
        const trickle = setInterval(() => socket.write('x'), 20);
        socket.on('close', () => clearInterval(trickle));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await expect(fetchDocument(`${base}/jwks`, { allowPrivateNetwork: true, timeoutMs: 300 })).rejects.toThrow(`${base}/jwks: timed out`);
      await closed;
    } finally {
      server.close();
    }
  });

  it('honest: a body without a declared length that ends when the connection closes (HTTP/1.0) is read whole', async () => {
    const server = await rawServer('HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"keys":[]}');
    try {
      const doc = await fetchDocument(`${server.base}/jwks`, { allowPrivateNetwork: true, timeoutMs: 1000 });
      expect([doc.status, doc.body.toString()]).toEqual([200, '{"keys":[]}']);
    } finally {
      server.close();
    }
  });
});

describe('fetchDocument: a name with several addresses', () => {
  it('tries the next vetted address when the first refuses the connection, as a browser would', async () => {
    const docs = await startDocServer();
    docs.handler = (_req, res) => res.end('{"second":true}');
    // Nothing listens on 127.0.0.2 at the server's port (it is bound to 127.0.0.1 only): that connection is refused.
    const resolve = (): Promise<{ address: string; family: number }[]> => Promise.resolve([{ address: '127.0.0.2', family: 4 }, { address: '127.0.0.1', family: 4 }]);
    try {
      const doc = await fetchDocument(`http://keys.example:${new URL(docs.url).port}/keys`, { allowPrivateNetwork: true, resolve });
      expect(doc.body.toString()).toBe('{"second":true}');
    } finally {
      await docs.close();
    }
  });

  it('connects to none of them when any address is refused by the rules', async () => {
    const docs = await startDocServer();
    let reached = 0;
    docs.handler = (_req, res) => {
      reached += 1;
      res.end('{}');
    };
    const resolve = (): Promise<{ address: string; family: number }[]> => Promise.resolve([{ address: '127.0.0.1', family: 4 }, { address: '10.0.0.1', family: 4 }]);
    try {
      const url = `https://keys.example:${new URL(docs.url).port}/keys`;
      await expect(fetchDocument(url, { allowPrivateNetwork: false, resolve, isForbidden: (a) => a !== '127.0.0.1' })).rejects.toThrow(`${url}: resolves to a loopback, private, link-local or reserved address`);
      expect(reached).toBe(0);
    } finally {
      await docs.close();
    }
  });
});

describe('fetchDocument: name lookups in turn', () => {
  /** A stand-in resolver: names starting with `hung` answer only when released, others at once; all to 127.0.0.1. */
  function resolver() {
    const asked: string[] = [];
    const held: (() => void)[] = [];
    let pending = 0;
    let most = 0;
    let onAsk = (): void => undefined;
    const resolve = (host: string): Promise<{ address: string; family: number }[]> => {
      asked.push(host);
      pending += 1;
      most = Math.max(most, pending);
      onAsk();
      const answer = (): { address: string; family: number }[] => {
        pending -= 1;
        return [{ address: '127.0.0.1', family: 4 }];
      };
      return host.startsWith('hung') ? new Promise((settle) => held.push(() => settle(answer()))) : Promise.resolve().then(answer);
    };
    const asks = (n: number): Promise<void> => new Promise((done) => {
      onAsk = () => asked.length >= n && done();
      onAsk();
    });
    return { resolve, asked, asks, releaseAll: () => held.splice(0).forEach((release) => release()), most: () => most };
  }

  it('keeps one lookup pending at a time, also after its callers gave up: names that never answer cannot take the process\'s lookup threads', async () => {
    const docs = await startDocServer();
    docs.handler = (_req, res) => res.end('{}');
    const port = new URL(docs.url).port;
    const names = resolver();
    const options = { allowPrivateNetwork: true, resolve: names.resolve };
    try {
      const callers = [0, 1, 2].map(() => new AbortController());
      const gaveUp = callers.map((c, i) => fetchDocument(`http://hung${i}.example:${port}/keys`, options, 'application/json', { signal: c.signal }).catch((e: unknown) => e));
      await names.asks(1);
      for (const c of callers) c.abort();
      for (const [i, err] of (await Promise.all(gaveUp)).entries()) {
        expect((err as Error).message).toBe(`http://hung${i}.example:${port}/keys: was aborted (AbortError)`);
      }
      // The first lookup still runs (getaddrinfo cannot be stopped); the others were never started.
      expect(names.asked).toEqual(['hung0.example']);
      const next = fetchDocument(`http://keys.example:${port}/keys`, options);
      names.releaseAll();
      expect((await next).status).toBe(200);
      expect(names.asked).toEqual(['hung0.example', 'keys.example']);
      expect(names.most()).toBe(1);
    } finally {
      names.releaseAll();
      await docs.close();
    }
  });

  it('serves many fetches at once, each name looked up in its turn', async () => {
    const docs = await startDocServer();
    docs.handler = (_req, res) => res.end('{}');
    const port = new URL(docs.url).port;
    const names = resolver();
    try {
      const many = await Promise.all(Array.from({ length: 20 }, (_, i) => fetchDocument(`http://rp${i}.example:${port}/keys`, { allowPrivateNetwork: true, resolve: names.resolve })));
      expect(many.map((doc) => doc.status)).toEqual(Array.from({ length: 20 }, () => 200));
      expect([names.asked.length, names.most()]).toEqual([20, 1]);
    } finally {
      await docs.close();
    }
  });
});

describe('fetchDocument: no proxy from the environment', () => {
  /** A forward proxy that records what it is asked and relays nothing. */
  async function recordingProxy() {
    const asked: string[] = [];
    const proxy = createServer((req, res) => {
      asked.push(`${req.method ?? ''} ${req.url ?? ''}`);
      res.statusCode = 502;
      res.end();
    });
    proxy.on('connect', (req: IncomingMessage, socket: import('node:stream').Duplex) => {
      asked.push(`CONNECT ${req.url ?? ''}`);
      socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, asked, close: () => proxy.close() };
  }

  /** Node 24's global agents as `NODE_USE_ENV_PROXY=1` (or `--use-env-proxy`) with HTTP(S)_PROXY set makes them; undone after `work`. */
  async function withEnvProxy(proxyUrl: string, work: () => Promise<void>): Promise<void> {
    const proxied: AgentOptions & { proxyEnv: Record<string, string> } = { proxyEnv: { HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl } };
    const saved = [http.globalAgent, https.globalAgent] as const;
    http.globalAgent = new http.Agent(proxied);
    https.globalAgent = new https.Agent(proxied);
    try {
      await work();
    } finally {
      [http.globalAgent, https.globalAgent] = saved;
    }
  }

  it('connects to the address it vetted for a name, never handing the name to a proxy that would resolve it again', async () => {
    const proxy = await recordingProxy();
    const docs = await startDocServer();
    docs.handler = (_req, res) => res.end('{"direct":true}');
    const resolve = (): Promise<{ address: string; family: number }[]> => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
    try {
      await withEnvProxy(proxy.url, async () => {
        const doc = await fetchDocument(`http://keys.example:${new URL(docs.url).port}/keys`, { allowPrivateNetwork: true, resolve });
        expect(doc.body.toString()).toBe('{"direct":true}');
      });
      expect(proxy.asked).toEqual([]);
    } finally {
      proxy.close();
      await docs.close();
    }
  });

  it('opens https to the vetted address itself, not through a CONNECT tunnel of the proxy', async () => {
    const proxy = await recordingProxy();
    const docs = await startDocServer('https');
    docs.handler = (_req, res) => res.end('{"direct":true}');
    try {
      await withEnvProxy(proxy.url, async () => {
        const doc = await fetchDocument(`${docs.url}/keys`, { allowPrivateNetwork: false, ca: docs.ca, isForbidden: (a) => a !== '127.0.0.1' });
        expect(doc.body.toString()).toBe('{"direct":true}');
      });
      expect(proxy.asked).toEqual([]);
    } finally {
      proxy.close();
      await docs.close();
    }
  });
});

describe('providerFetch: oidc-provider\'s own request options, the same limits', () => {
  const open = { allowPrivateNetwork: true };

  /** A loopback server that records what arrives and answers with `handler` (or never). */
  async function recorder(handler?: (req: IncomingMessage, res: ServerResponse) => void) {
    const seen: { url: string; method: string; accept: string | undefined; closed: Promise<void> }[] = [];
    let arrived: () => void = () => undefined;
    const firstArrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', method: req.method ?? '', accept: req.headers.accept, closed: new Promise((resolve) => req.socket.once('close', () => resolve())) });
      arrived();
      handler?.(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      seen,
      firstArrival,
      close: () => {
        server.closeAllConnections();
        server.close();
      },
    };
  }

  it('the caller\'s AbortSignal aborts a request in flight and closes the connection', async () => {
    const server = await recorder();
    try {
      const controller = new AbortController();
      const pending = providerFetch(open)(`${server.base}/keys`, { signal: controller.signal }).catch((e: unknown) => e);
      await server.firstArrival;
      controller.abort();
      const err = await pending;
      expect(err).toBeInstanceOf(OutboundFetchError);
      expect((err as Error).message).toBe(`${server.base}/keys: was aborted (AbortError)`);
      await server.seen[0]?.closed;
    } finally {
      server.close();
    }
  });

  it('an already aborted signal (oidc-provider\'s timeout fired) never connects', async () => {
    const server = await recorder((_req, res) => res.end('{}'));
    try {
      const signal = AbortSignal.abort(new DOMException('timed out', 'TimeoutError'));
      await expect(providerFetch(open)(`${server.base}/keys`, { signal })).rejects.toThrow(`${server.base}/keys: was aborted (TimeoutError)`);
      expect(server.seen).toHaveLength(0);
    } finally {
      server.close();
    }
  });

  it('sends oidc-provider\'s accept header and method, refuses other methods, passes caching headers back', async () => {
    const server = await recorder((_req, res) => {
      res.setHeader('content-type', 'application/jwk-set+json');
      res.setHeader('cache-control', 'max-age=120');
      res.setHeader('set-cookie', 'tracker=1');
      res.end('{"keys":[]}');
    });
    try {
      const fetch = providerFetch(open);
      const response = await fetch(`${server.base}/keys`, { method: 'GET', headers: { Accept: 'application/json' } });
      expect([response.status, await response.text()]).toEqual([200, '{"keys":[]}']);
      expect(response.headers.get('cache-control')).toBe('max-age=120');
      expect(response.headers.get('content-type')).toBe('application/jwk-set+json');
      expect(response.headers.get('set-cookie')).toBeNull();
      const head = await fetch(new URL(`${server.base}/head`), { method: 'HEAD' });
      expect([head.status, await head.text()]).toEqual([200, '']);
      await expect(fetch(`${server.base}/post`, { method: 'POST', body: 'x' })).rejects.toThrow(`${server.base}/post: method POST is not allowed (GET and HEAD only)`);
      expect(server.seen.map((s) => [s.url, s.method, s.accept])).toEqual([
        ['/keys', 'GET', 'application/json'],
        ['/head', 'HEAD', 'application/json'],
      ]);
    } finally {
      server.close();
    }
  });

  it('keeps the 512 KiB body limit, same-host redirects and the caller\'s redirect mode', async () => {
    const server = await recorder((req, res) => {
      if (req.url === '/big') res.end('x'.repeat(512 * 1024 + 1));
      else if (req.url === '/exact') res.end('x'.repeat(512 * 1024));
      else if (req.url === '/away') {
        res.statusCode = 302;
        res.setHeader('location', 'http://127.0.0.2:1/keys');
        res.end();
      } else if (req.url === '/hop') {
        res.statusCode = 302;
        res.setHeader('location', '/exact');
        res.end();
      }
    });
    try {
      const fetch = providerFetch(open);
      await expect(fetch(`${server.base}/big`)).rejects.toThrow(`${server.base}/big: response larger than 524288 bytes`);
      expect((await (await fetch(`${server.base}/hop`)).arrayBuffer()).byteLength).toBe(512 * 1024);
      await expect(fetch(`${server.base}/away`)).rejects.toThrow(`${server.base}/away: redirects to another host (127.0.0.2:1)`);
      expect((await fetch(`${server.base}/hop`, { redirect: 'manual' })).status).toBe(302);
      await expect(fetch(`${server.base}/hop`, { redirect: 'error' })).rejects.toThrow(`${server.base}/hop: redirects, and the caller allows no redirects`);
    } finally {
      server.close();
    }
  });

  it('refuses private targets when private networks are not allowed, whatever the caller asks', async () => {
    for (const url of ['https://[::127.0.0.1]/keys', 'https://[::ffff:7f00:1]/keys', 'https://[64:ff9b::a9fe:a9fe]/latest', 'https://[2002:7f00:1::]/keys', 'http://rp.example/keys']) {
      await expect(providerFetch({ allowPrivateNetwork: false })(url, { signal: new AbortController().signal })).rejects.toBeInstanceOf(OutboundFetchError);
    }
  });

  it('stops at 5 s even when a longer timeout is configured (fake clock)', async () => {
    const server = await recorder();
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const pending = providerFetch({ ...open, timeoutMs: 60_000 })(`${server.base}/slow`).catch((e: unknown) => e);
      await server.firstArrival;
      jest.advanceTimersByTime(4_999);
      await new Promise((resolve) => setImmediate(resolve));
      let settled = false;
      void pending.then(() => {
        settled = true;
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      jest.advanceTimersByTime(1);
      const err = await pending;
      expect((err as Error).message).toBe(`${server.base}/slow: timed out`);
    } finally {
      jest.useRealTimers();
      server.close();
    }
  });
});
