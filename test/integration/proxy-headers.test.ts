import { describe, expect, it } from '@jest/globals';

import { capturingLogger } from '../helpers/logs.js';
import { appPerSuite } from '../helpers/suite-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Header values a warning must never carry. */
const FORWARDED = { 'x-forwarded-for': '203.0.113.77, 198.51.100.9', forwarded: 'for=203.0.113.78;proto=https' };

const parsed = (lines: string[]): Record<string, unknown>[] => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('svc.proxy=false: nothing a client writes names its request, and forwarding headers are told once', () => {
  const { logger, lines } = capturingLogger();
  const running = appPerSuite({ logger, properties: { 'svc.proxy': false } });
  const ignoredWarnings = (): Record<string, unknown>[] => parsed(lines).filter((l) => l.e === 'proxy_headers_ignored');

  it("attack: a direct client's X-Request-Id (the operator's own id, say) is not used: the request gets its own, and no line carries the sent one", async () => {
    const sent = 'operator-request-0001';
    const res = await fetch(`${running.baseUrl}/healthz`, { headers: { 'x-request-id': sent } });
    const used = res.headers.get('x-request-id');
    expect(used).toMatch(UUID);
    expect(parsed(lines).find((l) => l.e === 'request' && l.request_id === used)).toMatchObject({ route: '/healthz' });
    expect(lines.join('\n')).not.toContain(sent);
    // Honest: a request without a forwarding header is no reason to warn.
    expect(ignoredWarnings()).toEqual([]);
  });

  it('warns once, naming the setting and no header value, for many requests carrying X-Forwarded-For or Forwarded (also at once)', async () => {
    const send = (headers: Record<string, string>): Promise<Response> => fetch(`${running.issuer}/.well-known/openid-configuration`, { headers });
    await Promise.all([...Array(10).keys()].map((i) => send(i % 2 ? { 'x-forwarded-for': FORWARDED['x-forwarded-for'] } : { forwarded: FORWARDED.forwarded })));
    for (const headers of [FORWARDED, { 'X-Forwarded-For': '203.0.113.79' }, { FORWARDED: 'for=203.0.113.80' }] as Record<string, string>[]) expect((await send(headers)).status).toBe(200);
    const warned = ignoredWarnings();
    expect(warned).toEqual([{ e: 'proxy_headers_ignored', header: expect.stringMatching(/^(x-forwarded-for|forwarded)$/), fix: expect.stringContaining('svc.proxy=true') }]);
    expect(JSON.stringify(warned)).not.toMatch(/203\.0\.113|198\.51\.100/);
  });
});

describe('svc.proxy=true: the request id the trusted proxy sets is used and echoed', () => {
  const { logger, lines } = capturingLogger();
  const running = appPerSuite({ logger, properties: { 'svc.proxy': true } });

  it('honest: the X-Request-Id the proxy set names the request, its answer and its log line', async () => {
    const res = await fetch(`${running.baseUrl}/healthz`, { headers: { 'x-request-id': 'edge-5f0c.Aa_-0001', 'x-forwarded-for': '203.0.113.7' } });
    expect(res.headers.get('x-request-id')).toBe('edge-5f0c.Aa_-0001');
    expect(parsed(lines).find((l) => l.e === 'request' && l.request_id === 'edge-5f0c.Aa_-0001')).toMatchObject({ route: '/healthz', status: 200 });
  });

  it('keeps the charset and length rules: a malformed id is replaced by a new one', async () => {
    for (const sent of ['short07', 'x'.repeat(129), 'has space-0001', 'quote"-0001', 'slash/0001', 'edge-0001, edge-0002']) {
      const used = (await fetch(`${running.baseUrl}/healthz`, { headers: { 'x-request-id': sent } })).headers.get('x-request-id');
      expect([sent, used]).toEqual([sent, expect.stringMatching(UUID)]);
    }
    expect((await fetch(`${running.baseUrl}/healthz`, { headers: { 'x-request-id': 'y'.repeat(128) } })).headers.get('x-request-id')).toBe('y'.repeat(128));
  });

  it('never warns about forwarding headers, which are expected', async () => {
    for (const headers of [FORWARDED, {}]) expect((await fetch(`${running.baseUrl}/healthz`, { headers })).status).toBe(200);
    expect(parsed(lines).filter((l) => l.e === 'proxy_headers_ignored')).toEqual([]);
  });
});
