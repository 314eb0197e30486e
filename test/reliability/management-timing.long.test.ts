import { describe, expect, it } from '@jest/globals';

import { checkBasicAuth } from '../../lib/web/basic-auth.js';

const header = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Median of per-call times (ns) of `fn` and `gn`, interleaved so drift hits both alike. */
function interleavedMedians(fn: () => unknown, gn: () => unknown, rounds: number): [number, number] {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    let t = process.hrtime.bigint();
    for (let j = 0; j < 20; j += 1) fn();
    a.push(Number(process.hrtime.bigint() - t));
    t = process.hrtime.bigint();
    for (let j = 0; j < 20; j += 1) gn();
    b.push(Number(process.hrtime.bigint() - t));
  }
  const median = (v: number[]): number => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)] as number;
  return [median(a), median(b)];
}

describe('management credentials are compared in constant time', () => {
  const password = 'correct horse battery staple 0123456789';

  it('takes as long for a password wrong in its last character as for one wrong in its first', () => {
    const lastWrong = header('admin', `${password.slice(0, -1)}X`);
    const firstWrong = header('admin', `X${password.slice(1)}`);
    expect(checkBasicAuth(lastWrong, 'admin', password)).toBe('wrong');
    expect(checkBasicAuth(firstWrong, 'admin', password)).toBe('wrong');
    for (let i = 0; i < 2000; i += 1) checkBasicAuth(lastWrong, 'admin', password); // warm up
    const [late, early] = interleavedMedians(
      () => checkBasicAuth(lastWrong, 'admin', password),
      () => checkBasicAuth(firstWrong, 'admin', password),
      400,
    );
    // Both compare fixed-size digests with timingSafeEqual: no secret-dependent early exit.
    expect(late / early).toBeGreaterThan(0.75);
    expect(late / early).toBeLessThan(1.33);
  });

  it('takes as long for a wrong user as for a right user with a wrong password', () => {
    const wrongUser = header('admim', password);
    const wrongPassword = header('admin', `${password.slice(0, -1)}X`);
    for (let i = 0; i < 2000; i += 1) checkBasicAuth(wrongUser, 'admin', password);
    const [user, pass] = interleavedMedians(
      () => checkBasicAuth(wrongUser, 'admin', password),
      () => checkBasicAuth(wrongPassword, 'admin', password),
      400,
    );
    expect(user / pass).toBeGreaterThan(0.75);
    expect(user / pass).toBeLessThan(1.33);
  });
});
