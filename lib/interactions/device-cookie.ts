import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

import { sameSignature } from '../web/cookie-keyring.js';

/** The cookie that holds a browser's device entries (OWASP's "device cookies"). */
export const DEVICE_COOKIE = 'svc.device';

/** Login names a browser holds device entries for; the oldest is dropped beyond it. */
export const DEVICE_NAMES_PER_BROWSER = 5;

/** How many `svc.device` values of one request's Cookie header are read, in the order the browser sent them. */
export const DEVICE_COOKIE_VALUES = 8;

const MAC_LENGTH = 22;

/**
 * The first {@link DEVICE_COOKIE_VALUES} values of the device cookie in a Cookie header, read as Koa reads the first.
 * A browser sends one per domain and path: a sibling subdomain's `Domain=` cookie at a longer path comes before hers.
 */
export function deviceCookieValues(header: string | undefined): string[] {
  const values: string[] = [];
  for (const [, value = ''] of (header ?? '').matchAll(/(?:^|;) *svc\.device=([^;]*)/g)) {
    values.push(value.startsWith('"') ? value.slice(1, -1) : value);
    if (values.length === DEVICE_COOKIE_VALUES) break;
  }
  return values;
}

/**
 * OWASP's device cookies: after a sign-in a browser receives an entry `deviceId.expires.nameTag.mac`
 * (`nameTag` a keyed MAC of the login name, `mac` over the rest), valid for that name while both
 * MACs verify under any key of the ring and it has not expired. Its device id names the counter.
 */
export class DeviceCookies {
  private readonly keys: readonly KeyObject[];

  /** @param keys the cookie keys, newest first (new entries use the first; all verify). */
  constructor(keys: readonly string[], private readonly lifetimeSeconds: number) {
    if (keys.length === 0) throw new TypeError('DeviceCookies: at least one cookie key is required');
    this.keys = keys.map((key) => createSecretKey(Buffer.from(`svc-device-cookie:${key}`, 'utf8')));
  }

  /** The device id of the cookie's valid entry for `name` (already normalised), if it has one. */
  deviceFor(cookie: string | undefined, name: string, now = Date.now()): string | undefined {
    for (const [deviceId, expires, nameTag, mac] of liveEntries(cookie, now)) {
      for (const key of this.keys) {
        if (sameSignature(nameTag, tag(key, `name:${name}`)) && sameSignature(mac, tag(key, `${deviceId}.${expires}.${nameTag}`))) return deviceId;
      }
    }
    return undefined;
  }

  /** The cookie value after a sign-in of `name` on `deviceId` (new when undefined): a fresh entry, then the browser's other live ones. */
  issue(cookie: string | undefined, name: string, deviceId: string | undefined, now = Date.now()): string {
    const key = this.keys[0] as KeyObject;
    const device = deviceId ?? randomBytes(16).toString('base64url');
    const expires = Math.floor(now / 1000 + this.lifetimeSeconds).toString(36);
    const nameTag = tag(key, `name:${name}`);
    const fresh = `${device}.${expires}.${nameTag}.${tag(key, `${device}.${expires}.${nameTag}`)}`;
    const others = liveEntries(cookie, now)
      .filter(([id]) => id !== device)
      .map((parts) => parts.join('.'));
    return [fresh, ...others].slice(0, DEVICE_NAMES_PER_BROWSER).join('~');
  }
}

/** The unexpired ones of the well-formed entries of a cookie value (anything else is ignored), split into their parts. */
function liveEntries(cookie: string | undefined, now: number): [string, string, string, string][] {
  if (!cookie || cookie.length > 2048) return [];
  return cookie
    .split('~')
    .filter((entry) => /^[\w-]{22}\.[0-9a-z]{1,10}\.[\w-]{22}\.[\w-]{22}$/.test(entry))
    .slice(0, DEVICE_NAMES_PER_BROWSER)
    .map((entry) => entry.split('.') as [string, string, string, string])
    .filter(([, expires]) => parseInt(expires, 36) * 1000 > now);
}

const tag = (key: KeyObject, data: string): string => createHmac('sha256', key).update(data, 'utf8').digest('base64url').slice(0, MAC_LENGTH);
