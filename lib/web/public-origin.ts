import type { Middleware } from 'koa';

import type { Logger } from '../logger.js';

/** The scheme and authority of an absolute-form request target (`GET http://evil.example/… HTTP/1.1`, RFC 9112 section 3.2.2). */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** `target` in origin form: its scheme and authority dropped, so it starts with `/`. */
const originForm = (target: string): string => {
  const rest = target.replace(ABSOLUTE_FORM, '');
  return rest.startsWith('/') ? rest : `/${rest}`;
};

/**
 * Pins every request to the public origin of `svc.base-url`: `Host` set to its host, a client-sent
 * `X-Forwarded-Host` dropped, the scheme Koa reports (`protocol`, `secure`, its cookie jar's) set to its scheme (behind a
 * trusted proxy `X-Forwarded-Proto` too), and an absolute-form request target cut to its path and query.
 * oidc-provider builds its URLs and decides `Secure` cookies from the request (Koa's `href` is an
 * absolute-form target itself): `Host: evil.example` or `GET http://evil.example/…` would otherwise reach
 * discovery and registration responses, and an https base URL whose TLS ends in front of a process not told
 * `svc.proxy` would advertise http endpoints and set cookies without `Secure`. A host app whose `proxy` differs from
 * `svc.proxy` is told once to `logger` (`proxy_settings_differ`), and so is the first request carrying `X-Forwarded-For`
 * or `Forwarded` while `svc.proxy` is off (`proxy_headers_ignored`, naming no value: anyone may send them).
 */
export function pinPublicOrigin(baseUrl: string, proxy: boolean, logger?: Logger): Middleware {
  const base = new URL(baseUrl);
  const scheme = base.protocol.slice(0, -1);
  let told = false;
  let toldIgnored = proxy;
  return (ctx, next) => {
    // Behind a proxy every client then counts as the proxy's address: one person's failures lock everyone out.
    const forwarded = toldIgnored ? undefined : ['x-forwarded-for', 'forwarded'].find((name) => ctx.req.headers[name] !== undefined);
    if (forwarded && logger) {
      toldIgnored = true;
      logger.warn('proxy_headers_ignored', { header: forwarded, fix: 'behind a proxy of yours set svc.proxy=true (and svc.proxy.hops), or every client counts as its address for the throttles; without one, a client sent it: leave svc.proxy off' });
    }
    // A host app trusting X-Forwarded-* unlike svc.proxy: one of the two is wrong, and the throttles count by ours.
    if (!told && logger && ctx.app.proxy !== proxy) {
      told = true;
      logger.warn('proxy_settings_differ', { host_proxy: ctx.app.proxy, svc_proxy: proxy, fix: 'behind a proxy set both (new Koa({ proxy: settings.proxy })) and svc.proxy.hops; else neither' });
    }
    const headers = ctx.req.headers;
    headers.host = base.host;
    delete headers['x-forwarded-host'];
    if (proxy) headers['x-forwarded-proto'] = scheme;
    // An own property in place of Koa's getter: `secure`, `origin` and `href` read it.
    Object.defineProperty(ctx.request, 'protocol', { value: scheme, configurable: true, enumerable: true });
    // Koa's cookie jar keeps the scheme of its making, and a host app's middleware may have made it already.
    ctx.cookies.secure = scheme === 'https';
    if (ABSOLUTE_FORM.test(ctx.originalUrl)) ctx.originalUrl = ctx.request.originalUrl = originForm(ctx.originalUrl);
    if (ABSOLUTE_FORM.test(ctx.url)) ctx.url = originForm(ctx.url);
    return next();
  };
}
