import { request } from 'node:http';

/**
 * A raw HTTP request with what fetch() would not let us forge: `Host`, and with `target` an absolute-form
 * request target (`GET http://evil.example/… HTTP/1.1`, which Node's server accepts, as RFC 9112 requires).
 */
export function raw(url: string, method: string, headers: Record<string, string>, body?: string, target?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const { pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, path: target === undefined ? `${pathname}${search}` : `${target}${pathname}${search}` }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
