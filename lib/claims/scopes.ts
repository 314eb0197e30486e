/** The fixed scope map (C5): not configurable, so a scope means the same thing on every deployment. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  openid: ['sub'],
  profile: ['name', 'given_name', 'family_name', 'birthdate'],
  email: ['email', 'email_verified'],
  'svc.insurance': ['demo.ver.healthinsurance.l0.api.demo', 'name', 'birthdate'],
  'svc.insurance.verified': ['svc.ver.idcard.l3.nfc', 'demo.ver.healthinsurance.l0.api.demo'],
});

/** Claims that are protocol data, never user data (C4). */
export const PROTOCOL_CLAIMS: ReadonlySet<string> = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'scope']);

/** The user-data claims the granted `scope` value asks for, in scope order, without duplicates. */
export function claimsForScope(scope: string | undefined): string[] {
  const out = new Set<string>();
  for (const s of (scope ?? '').split(' ')) for (const claim of SCOPE_CLAIMS[s] ?? []) if (claim !== 'sub') out.add(claim);
  return [...out];
}
