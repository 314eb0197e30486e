const EXACT = new Set([
    '/healthz',
    '/readyz',
    '/metrics',
    '/oidcdemo/login',
    '/oidcdemo/callback',
    '/oidc/v1/.well-known/openid-configuration',
    '/oidc/v1/jwks',
    '/oidc/v1/authorize',
    '/oidc/v1/token',
    '/oidc/v1/userinfo',
    '/oidc/v1/logout',
    '/oidc/v1/logout/confirm',
    '/oidc/v1/logout/success',
    '/oidc/v1/register',
    '/oidc/v1/par',
    '/oidc/v1/management/invite_client',
    '/oidc/v1/management/clients',
    '/oidc/v1/management/invitations',
    '/oidc/v1/management/subjects/revoke',
]);

const PATTERNS: [RegExp, string][] = [
  [/^\/oidc\/v1\/authorize\/[^/]+$/, '/oidc/v1/authorize/:uid'],
  [/^\/oidc\/v1\/register\/[^/]+$/, '/oidc/v1/register/:client_id'],
  [/^\/oidc\/v1\/interaction\/[^/]+$/, '/oidc/v1/interaction/:uid'],
  [/^\/oidc\/v1\/interaction\/[^/]+\/(login|confirm|abort)$/, '/oidc/v1/interaction/:uid/$1'],
  [/^\/oidc\/v1\/management\/clients\/[^/]+$/, '/oidc/v1/management/clients/:client_id'],
  [/^\/oidc\/v1\/management\/clients\/[^/]+\/(disable|enable|revoke-grants)$/, '/oidc/v1/management/clients/:client_id/$1'],
  [/^\/oidc\/v1\/management\/invitations\/[^/]+$/, '/oidc/v1/management/invitations/:id'],
];

/** The route template of a request path, for logs and metric labels: ids as placeholders, unknown paths `other`. */
export function routeOf(path: string, basePath = ''): string {
  const p = basePath && path.startsWith(basePath) ? path.slice(basePath.length) || '/' : path;
  if (EXACT.has(p)) return p;
  for (const [re, template] of PATTERNS) {
    const m = re.exec(p);
    if (m) return template.replace('$1', m[1] ?? '');
  }
  return 'other';
}
