import { createSocket } from 'node:dgram';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { OutboundFetchError } from '../../lib/index.js';
import { fetchDocument, type OutboundFetchOptions } from '../../lib/net/fetch.js';
import { stalledNames } from '../../lib/net/name-lookups.js';
import { startDocServer, type HttpsDocServer } from '../helpers/registration.js';

/**
 * A DNS server on 127.0.0.1 (UDP): names starting with `hung` get no answer (`hung4…` names one to
 * their AAAA question only), `missing…` names NXDOMAIN, `lossy…` names none to their first A and
 * first AAAA question, every other name A 127.0.0.1 and no AAAA. It records each question as `name TYPE`.
 */
async function startDns() {
  const asked: string[] = [];
  const lost = new Set<string>();
  let onAsk = (): void => undefined;
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    const labels: string[] = [];
    let at = 12;
    for (let length = query[at] ?? 0; length > 0; length = query[at] ?? 0) {
      labels.push(query.subarray(at + 1, at + 1 + length).toString());
      at += length + 1;
    }
    const type = query.readUInt16BE(at + 1) === 1 ? 'A' : 'AAAA';
    const name = labels.join('.').toLowerCase();
    asked.push(`${name} ${type}`);
    onAsk();
    if (name.startsWith('hung') && !(name.startsWith('hung4') && type === 'AAAA')) return;
    if (name.startsWith('lossy') && !lost.has(`${name} ${type}`)) return void lost.add(`${name} ${type}`);
    const missing = name.startsWith('missing');
    const answer = type === 'A' && !missing ? Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]) : Buffer.alloc(0);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(missing ? 0x8183 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer.length > 0 ? 1 : 0, 6);
    socket.send(Buffer.concat([header, query.subarray(12, at + 5), answer]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    asked,
    /** Settles once `name`'s A question has been asked `times` times. */
    askedFor: (name: string, times = 1): Promise<void> => new Promise((done) => {
      onAsk = () => asked.filter((q) => q === `${name} A`).length >= times && done();
      onAsk();
    }),
    close: () => new Promise<void>((resolve) => socket.close(resolve)),
  };
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(OutboundFetchError);
  return (err as Error).message;
}

describe('fetchDocument: names that must resolve to public addresses are asked of DNS, never waiting in turn', () => {
  let docs: HttpsDocServer;
  let dns: Awaited<ReturnType<typeof startDns>>;
  let port = '';
  /**
   * Strict options whose DNS is the test's server; the doc server's loopback address stands in for a public one. Its
   * wait for an answer is a test's (60 s), not the production 1 s a busy machine can pass, unless a case sets one.
   */
  const options = (answerMs = 60_000, extra: Partial<OutboundFetchOptions> = {}): OutboundFetchOptions => ({
    allowPrivateNetwork: false,
    isForbidden: (address) => address !== '127.0.0.1' && address !== '::1',
    ca: docs.ca,
    dns: { servers: [dns.server], answerMs },
    ...extra,
  });

  beforeAll(async () => {
    docs = await startDocServer('https');
    docs.handler = (_req, res) => res.end('{"keys":[]}');
    port = new URL(docs.url).port;
    dns = await startDns();
  });
  afterAll(async () => {
    await docs.close();
    await dns.close();
  });

  it('fetches many names DNS answers at once, each asked for A and AAAA', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `rp${i}.keys.test`);
    const many = await Promise.all(names.map((name) => fetchDocument(`https://${name}:${port}/keys`, options())));
    expect(many.map((doc) => doc.body.toString())).toEqual(names.map(() => '{"keys":[]}'));
    expect(names.flatMap((name) => dns.asked.filter((q) => q.startsWith(`${name} `))).sort()).toEqual(names.flatMap((name) => [`${name} A`, `${name} AAAA`]).sort());
  });

  it('fetches a listed private host (localhost) through the system\'s resolver, without asking DNS', async () => {
    const doc = await fetchDocument(`https://localhost:${port}/keys`, options(undefined, { privateHosts: [`localhost:${port}`] }));
    expect(doc.status).toBe(200);
    expect(dns.asked.filter((q) => q.includes('localhost'))).toEqual([]);
  });

  it('a name whose DNS never answers holds neither other names nor a listed host\'s lookup while it waits', async () => {
    const caller = new AbortController();
    let settled = false;
    const hung = fetchDocument(`https://hung-wait.example:${port}/keys`, options(60_000), 'application/json', { signal: caller.signal }).finally(() => {
      settled = true;
    });
    await dns.askedFor('hung-wait.example');
    const others = await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => fetchDocument(`https://meanwhile${i}.keys.test:${port}/keys`, options(60_000))),
      fetchDocument(`https://localhost:${port}/keys`, options(60_000, { privateHosts: [`localhost:${port}`] })),
    ]);
    expect(others.map((doc) => doc.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(settled).toBe(false);
    caller.abort();
    expect(await failure(hung)).toBe(`https://hung-wait.example:${port}/keys: was aborted (AbortError)`);
    // Given up by its caller, not by the deadline: no stall, so after one stall the name is still asked.
    expect(await failure(fetchDocument(`https://hung-wait.example:${port}/keys`, options(20)))).toMatch(/: the host name's DNS does not answer in time$/);
    const again = new AbortController();
    const retry = fetchDocument(`https://hung-wait.example:${port}/keys`, options(60_000), 'application/json', { signal: again.signal });
    await Promise.race([dns.askedFor('hung-wait.example', 3), retry.catch(() => undefined)]);
    expect(dns.asked.filter((q) => q === 'hung-wait.example A')).toHaveLength(3);
    again.abort();
    expect(await failure(retry)).toContain('was aborted');
  });

  it.each(['hung-again.example', 'hung4-again.example'])('fails %s, whose DNS does not answer (A nor AAAA, or A) in time, and after twice in a row from memory without asking, in any spelling', async (name) => {
    const url = `https://${name}:${port}/keys`;
    for (const time of [1, 2]) expect([time, await failure(fetchDocument(url, options(20)))]).toEqual([time, `${url}: the host name's DNS does not answer in time`]);
    const asked = dns.asked.length;
    // With a minute to answer, only the memory can fail these at once.
    for (const spelling of [url, `https://${name.toUpperCase()}.:${port}/keys`, `https://${name}.:${port}/other`]) {
      expect(await failure(fetchDocument(spelling, options(60_000)))).toMatch(/: the host name's DNS does not answer in time$/);
    }
    expect(dns.asked).toHaveLength(asked);
  });

  it('refuses a name DNS says does not exist, and asks again next time (an answer is no stall)', async () => {
    const url = `https://missing.keys.test:${port}/keys`;
    expect(await failure(fetchDocument(url, options()))).toBe(`${url}: the host name does not resolve`);
    const asked = dns.asked.length;
    expect(await failure(fetchDocument(url, options()))).toBe(`${url}: the host name does not resolve`);
    expect(dns.asked.length).toBeGreaterThan(asked);
  });

  it('honest: a name whose first answers were lost (or late: a cold resolver cache) fails this once, and is asked and fetched next time', async () => {
    const url = `https://lossy.keys.test:${port}/keys`;
    expect(await failure(fetchDocument(url, options(200)))).toBe(`${url}: the host name's DNS does not answer in time`);
    expect(dns.asked.filter((q) => q.startsWith('lossy.keys.test '))).toEqual(['lossy.keys.test A', 'lossy.keys.test AAAA']);
    expect((await fetchDocument(url, options(60_000))).body.toString()).toBe('{"keys":[]}');
    expect(dns.asked.filter((q) => q === 'lossy.keys.test A')).toHaveLength(2);
  });

  it('remembers at most 1000 names that do not answer, whatever the number of random names', async () => {
    for (let batch = 0; batch < 11; batch += 1) {
      const names = Array.from({ length: 100 }, (_, i) => `hung-${batch}-${i}-${Math.random().toString(36).slice(2)}.example`);
      const messages = await Promise.all(names.map((name) => failure(fetchDocument(`https://${name}/keys`, options(1)))));
      expect(messages.every((m) => m.endsWith(': the host name\'s DNS does not answer in time'))).toBe(true);
    }
    expect(stalledNames()).toBe(1000);
  });

  it('refuses localhost names as loopback without asking DNS (RFC 6761), unless listed', async () => {
    const strict = { allowPrivateNetwork: false, dns: { servers: [dns.server] } };
    for (const url of ['https://localhost/keys', 'https://keys.localhost/keys', 'https://LOCALHOST./keys']) {
      expect(await failure(fetchDocument(url, strict))).toMatch(/: resolves to a loopback, private, link-local or reserved address$/);
    }
    expect(dns.asked.filter((q) => q.includes('localhost'))).toEqual([]);
  });
});
