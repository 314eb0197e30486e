import { DEMO_PEOPLE, type DemoPerson } from '../../lib/demo/claim-modules.js';
import type { ClaimModule } from '../../lib/index.js';

/** A `claims` parameter as an object (`id_token`, `userinfo`). */
export type ClaimsObject = Record<string, Record<string, unknown>>;

/** UTF-8 bytes of the parameter value as sent. */
export const bytesOf = (claims: ClaimsObject): number => Buffer.byteLength(JSON.stringify(claims), 'utf8');

/**
 * A module providing every svc.* name (patterns): with it, every vocabulary name is in
 * `claims_supported`, the widest registry the budget has to hold for. It knows no values.
 */
export const everySvcName: ClaimModule = { name: 'every-svc-name', provides: ['svc.ver.**', 'svc.auth.**'], resolve: () => ({}) };

/**
 * The attack of issue 14: `count` distinct bracketed names, each standing for 2^`pairs` + 1
 * concrete names, one of them `svc.ver.email.l2` (which the demo modules provide):
 * `svc.ver.[email.l2,<prefix><i>.[a,b].[c,d]…]`. A longer `prefix` makes the request longer.
 */
export function bracketFlood(count: number, prefix = 'n', pairs = 7): Record<string, null> {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const tail = Array.from({ length: pairs }, (_, p) => `[${letters[(2 * p) % 26]},${letters[(2 * p + 1) % 26]}]`).join('.');
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`svc.ver.[email.l2,${prefix}${i}.${tail}]`, null]));
}

/**
 * A name standing for exactly `expansions` concrete names, one of them `svc.ver.email.l2` (which
 * the demo modules provide): `svc.ver.[email.l2,x<i>a0,…]`.
 */
export function nameWith(i: number, expansions: number): string {
  const others = Array.from({ length: expansions - 1 }, (_, j) => `,x${i}a${j}`).join('');
  return `svc.ver.[email.l2${others}]`;
}

/** `total` concrete names split over both channels (bracketed names of up to 64, plus singles). */
export function namesAcrossChannels(total: number): ClaimsObject {
  const claims: ClaimsObject = { id_token: {}, userinfo: {} };
  let left = total;
  for (let i = 0; left > 0; i += 1) {
    const size = Math.min(64, left);
    const channel = i % 2 === 0 ? 'id_token' : 'userinfo';
    (claims[channel] as Record<string, unknown>)[size === 1 ? (i % 2 === 0 ? 'email' : 'name') : nameWith(i, size)] = null;
    left -= size;
  }
  return claims;
}

/**
 * `claims` made exactly `bytes` long (UTF-8) by a requested `value` on `birthdate` in `userinfo`,
 * written with `unit` (a one- or two-byte character) and ASCII to even out.
 */
export function paddedTo(claims: ClaimsObject, bytes: number, unit = 'x'): ClaimsObject {
  const base = { ...claims, userinfo: { ...claims.userinfo, birthdate: { value: '' } } };
  const missing = bytes - bytesOf(base);
  if (missing < 0) throw new Error(`claims already ${bytesOf(base)} bytes`);
  const unitBytes = Buffer.byteLength(unit, 'utf8');
  const value = unit.repeat(Math.floor(missing / unitBytes)) + 'x'.repeat(missing % unitBytes);
  const out = { ...claims, userinfo: { ...claims.userinfo, birthdate: { value } } };
  if (bytesOf(out) !== bytes) throw new Error(`padding missed: ${bytesOf(out)} bytes`);
  return out;
}

/** Distinct spellings of a concrete svc.* name that stand for it alone (singleton brackets). */
function spellings(name: string): string[] {
  const [svc, family, ...segments] = name.split('.');
  const out = new Set<string>();
  const variants = (segs: string[]): string[] => {
    if (segs.length === 0) return [''];
    const [first, ...rest] = segs as [string, ...string[]];
    const tails = variants(rest);
    const heads = [first, `[${first}]`, `[[${first}]]`];
    const whole = rest.length > 0 ? [`[${segs.join('.')}]`] : [];
    return [...heads.flatMap((h) => tails.map((t) => (t ? `${h}.${t}` : h))), ...whole];
  };
  for (const v of variants(segments)) out.add(`${svc}.${family}.${v}`);
  return [...out].sort((a, b) => a.length - b.length);
}

/**
 * The request that grows most when stored, for the demo modules: the shortest distinct names those
 * modules provide, each asking for a `value` (stored as a MAC), `essential` when asked, until
 * 256 names or 8192 bytes are reached.
 */
export function valuedFlood(options: { essential?: boolean; value?: unknown } = {}): ClaimsObject {
  // Protocol claims would be shorter, but a value asked for them is not kept: they would store less.
  const plain = ['name', 'email', 'birthdate', 'given_name', 'family_name', 'email_verified'];
  const svc = ['svc.ver.email.l2', 'svc.ver.idcard.l3.nfc', 'svc.ver.mobile.l2.api', 'svc.auth.mobile.l2.otp'].flatMap(spellings);
  const names = [...plain, ...svc].sort((a, b) => a.length - b.length);
  const spec = { ...(options.essential ? { essential: true } : {}), value: options.value ?? 0 };
  const claims: ClaimsObject = { id_token: {}, userinfo: {} };
  let count = 0;
  for (const name of names) {
    for (const channel of ['userinfo', 'id_token'] as const) {
      if (count === 256) return claims;
      const channelClaims = claims[channel] as Record<string, unknown>;
      channelClaims[name] = spec;
      if (bytesOf(claims) > 8192) {
        delete channelClaims[name];
        return claims;
      }
      count += 1;
    }
  }
  return claims;
}

/**
 * The request that stores most concrete names, for {@link everySvcName}: every vocabulary name in
 * both channels (4 bracketed names each, 192 names), and up to 8192 bytes with long single names
 * asking for a value.
 */
export function vocabularyFlood(): ClaimsObject {
  const datasets = '[mobile,email,idcard,driverslicense]';
  const levels = '[l0,l2,l3]';
  const channel = (): Record<string, unknown> => ({
    [`svc.ver.${datasets}.${levels}`]: null,
    [`svc.ver.${datasets}.${levels}.[nfc,video,api]`]: null,
    [`svc.auth.${datasets}.${levels}`]: null,
    [`svc.auth.${datasets}.${levels}.[nfc,video,api]`]: null,
  });
  const claims: ClaimsObject = { id_token: channel(), userinfo: channel() };
  for (let i = 0; i < 64; i += 1) {
    const target = claims[i % 2 === 0 ? 'userinfo' : 'id_token'] as Record<string, unknown>;
    const name = `svc.ver.long${'x'.repeat(96)}${i}`;
    target[name] = { value: 0 };
    if (bytesOf(claims) > 8192) {
      delete target[name];
      break;
    }
  }
  return claims;
}

/**
 * `modules`, each counting its `resolve` calls, and its verified data's, into `calls.count` (to show
 * a module was never asked).
 */
export function countingModules(modules: ClaimModule[]): { modules: ClaimModule[]; calls: { count: number } } {
  const calls = { count: 0 };
  return {
    calls,
    modules: modules.map((m) => {
      const { verified } = m;
      return {
        ...m,
        resolve: (accountId: string, claims: readonly string[]) => {
          calls.count += 1;
          return m.resolve(accountId, claims);
        },
        ...(verified
          ? {
              verified: {
                offer: verified.offer,
                resolve: (accountId: string) => {
                  calls.count += 1;
                  return verified.resolve(accountId);
                },
              },
            }
          : {}),
      };
    }),
  };
}

/**
 * demo-basic's data with a driving licence checked by video, the demo offer's second document type, which no demo
 * account holds (C8: demo-basic has name, e-mail and `svc.ver.email.l2` only).
 */
export const LICENSED_DEMO_BASIC: DemoPerson = {
  ...(DEMO_PEOPLE['demo-0002'] as DemoPerson),
  driverslicense: { given_name: 'Max', family_name: 'Mustermann', birthdate: '1962-05-03', verified_at: '2025-04-10T11:30:00Z' },
};
