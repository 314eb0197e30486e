import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

import type { Context } from 'koa';
import type { Interaction } from 'oidc-provider';

/** A failed sign-in, as its login page shows it again after the redirect that answered the post. */
export interface FailedSignIn {
  /** The login name she typed (empty when too long to keep). */
  login: string;
  /** Refused by the throttle: when it lets the name try again (epoch milliseconds). */
  lockedUntil?: number;
  /** Her authenticator failed (threw, or gave no answer in time). Neither: a wrong login or password. */
  fault?: boolean;
}

/** On an http base URL, the cookie that carries a failed sign-in to its login page, at the interaction's path. */
const FAILED_SIGN_IN_COOKIE = 'svc.login-failed';

/** The longest login name kept (UTF-8 bytes as the cookie holds it, in JSON), so the cookie stays well within what browsers keep (4096 bytes). */
const LOGIN_KEPT_BYTES = 1024;

/**
 * Over https `__Host-svc.login-failed` at `/`, which only this host can set. Every request to the host carries it, so a
 * browser holds one, of its last failed sign-in (one per interaction would pile up with each retry from the application
 * within the hour); a tab whose failure a later one replaced shows its page plain on a reload.
 */
const cookieName = (secure: boolean): string => (secure ? `__Host-${FAILED_SIGN_IN_COOKIE}` : FAILED_SIGN_IN_COOKIE);

/** Remembers, recalls and forgets the failed sign-in of an interaction (see {@link failedSignIns}). */
export interface FailedSignIns {
  /** Sets the cookie of `interaction` to `failure`, until the interaction expires. */
  remember(ctx: Context, interaction: Pick<Interaction, 'uid' | 'exp'>, failure: FailedSignIn): void;
  /** The failure the request's cookie of interaction `uid` holds; nothing for a cookie of another, changed or forged. */
  recall(ctx: Context, uid: string): FailedSignIn | undefined;
  /** Clears the cookie at the page of interaction `uid`, when the request carries one. */
  forget(ctx: Context, uid: string): void;
}

/**
 * The failed sign-in of an interaction, kept from the post that failed to the page its 303 answer sends the browser
 * to, for every reload of that page: in a cookie (`HttpOnly`, `SameSite=Lax`, until the interaction expires),
 * AES-256-GCM under a key derived from the newest cookie key with the interaction's uid as associated data, so nothing
 * of it is in the store or the URL, and a value moved to another interaction's page opens there to nothing.
 * `pathOf` is the path of an interaction's page.
 */
export function failedSignIns(cookieKeys: readonly string[], pathOf: (uid: string) => string): FailedSignIns {
  const keys = cookieKeys.map((key) => Buffer.from(hkdfSync('sha256', key, '', 'svc-login-failed', 32)));
  const options = (ctx: Context, uid: string, expires?: Date) =>
    ({ path: ctx.secure ? '/' : pathOf(uid), secure: ctx.secure, httpOnly: true, sameSite: 'lax', signed: false, overwrite: true, expires }) as const;
  const open = (key: Buffer, uid: string, sealed: Buffer): FailedSignIn | undefined => {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12)).setAAD(Buffer.from(uid, 'utf8'));
      decipher.setAuthTag(sealed.subarray(12, 28));
      const { l, u, f } = JSON.parse(Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8')) as { l: string; u?: number; f?: boolean };
      return { login: l, lockedUntil: u, fault: f };
    } catch {
      return undefined;
    }
  };
  return {
    remember(ctx, { uid, exp }, { login, lockedUntil, fault }) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keys[0] as Buffer, iv).setAAD(Buffer.from(uid, 'utf8'));
      const plain = JSON.stringify({ l: Buffer.byteLength(JSON.stringify(login), 'utf8') - 2 > LOGIN_KEPT_BYTES ? '' : login, u: lockedUntil, f: fault });
      const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const value = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
      ctx.cookies.set(cookieName(ctx.secure), value, options(ctx, uid, new Date(exp * 1000)));
    },
    recall(ctx, uid) {
      const value = ctx.cookies.get(cookieName(ctx.secure), { signed: false });
      if (!value || !/^[\w-]{40,}$/.test(value)) return undefined;
      const sealed = Buffer.from(value, 'base64url');
      for (const key of keys) {
        const failure = open(key, uid, sealed);
        if (failure && typeof failure.login === 'string' && (failure.lockedUntil === undefined || Number.isFinite(failure.lockedUntil))) return failure;
      }
      return undefined;
    },
    forget(ctx, uid) {
      if (ctx.cookies.get(cookieName(ctx.secure), { signed: false }) !== undefined) ctx.cookies.set(cookieName(ctx.secure), null, options(ctx, uid));
    },
  };
}
