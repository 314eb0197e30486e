import { describe, expect, it } from '@jest/globals';

import { DEVICE_COOKIE_VALUES, DEVICE_NAMES_PER_BROWSER, DeviceCookies, deviceCookieValues } from '../../lib/interactions/device-cookie.js';

const DAY = 86_400;

describe('device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies")', () => {
  const cookies = new DeviceCookies(['key-one'], 180 * DAY);

  it('names a device for the name it was issued for, and never holds the name', () => {
    const value = cookies.issue(undefined, 'erika', undefined);
    const device = cookies.deviceFor(value, 'erika');
    expect(device).toMatch(/^[\w-]{22}$/);
    expect(cookies.deviceFor(value, 'max')).toBeUndefined();
    expect(value).not.toContain('erika');
    // Renewed after the next sign-in: the same device, a fresh entry.
    expect(cookies.deviceFor(cookies.issue(value, 'erika', device), 'erika')).toBe(device);
  });

  it('survives a rotation (verified under every key of the ring) but not a key dropped from it', () => {
    const value = cookies.issue(undefined, 'erika', undefined);
    expect(new DeviceCookies(['key-two', 'key-one'], 180 * DAY).deviceFor(value, 'erika')).toBe(cookies.deviceFor(value, 'erika'));
    expect(new DeviceCookies(['key-two'], 180 * DAY).deviceFor(value, 'erika')).toBeUndefined();
  });

  it('refuses an expired entry, a changed character anywhere, an entry moved to another name, and junk', () => {
    const now = Date.now();
    const value = cookies.issue(undefined, 'erika', undefined, now);
    expect(cookies.deviceFor(value, 'erika', now + 181 * DAY * 1000)).toBeUndefined();
    for (let i = 0; i < value.length; i += 1) {
      if (value[i] === '.') continue;
      const changed = `${value.slice(0, i)}${value[i] === 'A' ? 'B' : 'A'}${value.slice(i + 1)}`;
      expect(cookies.deviceFor(changed, 'erika', now)).toBeUndefined();
    }
    const [device, expires, , mac] = value.split('.');
    const maxTag = cookies.issue(undefined, 'max', undefined, now).split('.')[2];
    expect(cookies.deviceFor(`${device}.${expires}.${maxTag}.${mac}`, 'max', now)).toBeUndefined();
    for (const junk of ['', '~~~', 'a.b.c.d', `${value}${'~x'.repeat(2000)}`]) expect(cookies.deviceFor(junk, 'erika', now)).toBeUndefined();
  });

  it(`keeps at most ${DEVICE_NAMES_PER_BROWSER} names per browser, dropping the oldest`, () => {
    let value: string | undefined;
    const names = Array.from({ length: DEVICE_NAMES_PER_BROWSER + 2 }, (_v, i) => `person-${i}`);
    for (const name of names) value = cookies.issue(value, name, undefined);
    expect(value?.split('~')).toHaveLength(DEVICE_NAMES_PER_BROWSER);
    expect(names.filter((name) => cookies.deviceFor(value, name) !== undefined)).toEqual(names.slice(2));
  });

  it(`reads every svc.device value of a Cookie header in order (a planted one first), at most ${DEVICE_COOKIE_VALUES}, as Koa reads the first`, () => {
    expect(deviceCookieValues(undefined)).toEqual([]);
    expect(deviceCookieValues('')).toEqual([]);
    expect(deviceCookieValues('svc.device=hers')).toEqual(['hers']);
    expect(deviceCookieValues('svc.device=planted; _interaction=x; svc.device="hers"')).toEqual(['planted', 'hers']);
    expect(deviceCookieValues('xsvc.device=a;svc.devices=b; svc_device=c;svc.device=d')).toEqual(['d']);
    const header = Array.from({ length: 100 }, (_v, i) => `svc.device=v${i}`).join('; ');
    expect(deviceCookieValues(header)).toEqual(Array.from({ length: DEVICE_COOKIE_VALUES }, (_v, i) => `v${i}`));
  });
});
