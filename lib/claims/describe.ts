import type { ChannelClaims, ClaimRequest } from './request.js';
import { claimsForScope } from './scopes.js';
import { channelRequests } from './stored-form.js';
import { isSvcClaimName } from './syntax.js';

const STANDARD: Record<string, string> = {
  name: 'your full name',
  given_name: 'your first name',
  family_name: 'your last name',
  birthdate: 'your date of birth',
  email: 'your e-mail address',
  email_verified: 'whether your e-mail address is confirmed',
  'demo.ver.healthinsurance.l0.api.demo': 'your health insurance member number',
};
const DATASETS: Record<string, string> = { mobile: 'mobile number', email: 'e-mail address', idcard: 'ID card', driverslicense: 'driving licence' };
const PROCEDURES: Record<string, string> = { video: 'video check', nfc: 'NFC', api: 'checked with the issuer', otp: 'one-time password' };

/** A concrete claim name in plain words (for consent). */
export function describeClaim(name: string): string {
  if (STANDARD[name]) return STANDARD[name];
  if (!isSvcClaimName(name)) return name;
  const [, family, dataset = '', level = '', ...rest] = name.split('.');
  const what = DATASETS[dataset] ?? dataset;
  const details = [level.startsWith('l') ? `level ${level.slice(1)}` : level, ...rest.map((p) => PROCEDURES[p] ?? p)].filter(Boolean).join(', ');
  return family === 'auth' ? `proof that you confirmed your ${what}${details ? ` (${details})` : ''}` : `your verified ${what}${details ? ` (${details})` : ''}`;
}

/** A requested name, alternatives included, in plain words: "one of: driving licence (…), ID card (…)". */
export function describeRequested(request: ClaimRequest): string {
  if (!request.requested.includes('[')) return describeClaim(request.requested);
  return `one of: ${request.alternatives.map(describeClaim).join('; ')}`;
}

/** What an authorization request asks for, in plain words, each with whether it is essential. */
export function describeRequest(scope: string | undefined, claimsParameter: string | undefined): { text: string; essential: boolean }[] {
  const items = new Map<string, { text: string; essential: boolean }>();
  for (const claim of claimsForScope(scope)) items.set(claim, { text: describeClaim(claim), essential: false });
  let parsed: Record<string, unknown> = {};
  try {
    parsed = claimsParameter ? (JSON.parse(claimsParameter) as Record<string, unknown>) : {};
  } catch {
    parsed = {};
  }
  for (const channel of ['id_token', 'userinfo']) {
    for (const request of channelRequests(parsed[channel] as ChannelClaims | undefined)) {
      const existing = items.get(request.requested);
      items.set(request.requested, { text: describeRequested(request), essential: request.essential || (existing?.essential ?? false) });
    }
  }
  return [...items.values()];
}
