import type { Channel } from './privacy.js';
import type { ChannelClaims, ClaimRequest } from './request.js';
import { claimsForScope } from './scopes.js';
import { deliveredRequests } from './stored-form.js';
import { isSvcClaimName } from './syntax.js';
import { asksNumbers, asksTime, verifiedRequestsOf, type VerifiedRequest } from './verified-request.js';

const CHANNELS: readonly Channel[] = ['id_token', 'userinfo'];

// Maps, not objects: a claim name or segment may be "constructor" or "__proto__".
const STANDARD: ReadonlyMap<string, string> = new Map(Object.entries({
  name: 'your full name',
  given_name: 'your first name',
  family_name: 'your last name',
  birthdate: 'your date of birth',
  email: 'your e-mail address',
  email_verified: 'whether your e-mail address is confirmed',
  nationalities: 'your nationality',
  phone_number: 'your phone number',
  'demo.ver.healthinsurance.l0.api.demo': 'your health insurance member number',
}));
const DATASETS: ReadonlyMap<string, string> = new Map(Object.entries({ mobile: 'mobile number', email: 'e-mail address', idcard: 'ID card', driverslicense: 'driving licence' }));
const PROCEDURES: ReadonlyMap<string, string> = new Map(Object.entries({ video: 'video check', nfc: 'NFC', api: 'checked with the issuer', otp: 'one-time password' }));

/** What a claim holds in the words of the module providing it (its `holds`), if it says. */
type HoldsOf = (claim: string) => string | undefined;

/** A concrete claim name in plain words (for consent), with what it holds when its module says. */
function describeClaim(name: string, holdsOf: HoldsOf): string {
  const holds = holdsOf(name);
  return holds ? `${nameOf(name)}: ${holds}` : nameOf(name);
}

/** A concrete claim name in plain words. */
function nameOf(name: string): string {
  const standard = STANDARD.get(name);
  if (standard) return standard;
  if (!isSvcClaimName(name)) return name;
  const [, family, dataset = '', level = '', ...rest] = name.split('.');
  const what = DATASETS.get(dataset) ?? dataset;
  const details = [level.startsWith('l') ? `level ${level.slice(1)}` : level, ...rest.map((p) => PROCEDURES.get(p) ?? p)].filter(Boolean).join(', ');
  return family === 'auth' ? `proof that you confirmed your ${what}${details ? ` (${details})` : ''}` : `your verified ${what}${details ? ` (${details})` : ''}`;
}

const list = (items: readonly string[]): string => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);

/** A `verified_claims` request element in plain words: which data, and which details of its check. */
function describeVerified(request: VerifiedRequest): string {
  const claims = list(Object.keys(request.claims).map((c) => (STANDARD.get(c) ?? c).replace(/^your /, '')));
  const details: string[] = [];
  if (request.evidence) details.push('how it was checked (for example which document and how)');
  if (asksNumbers(request)) details.push('the number of the document or record checked, or the reference of the check');
  if (asksTime(request)) details.push('when it was checked');
  if (request.assuranceLevel) details.push('the level of the check');
  return `your ${claims}, as verified by an identity check${details.length > 0 ? `, with ${list(details)}` : ''}`;
}

/** A requested name, alternatives included, in plain words: "one of: driving licence (…), ID card (…)". */
function describeRequested(request: ClaimRequest, holdsOf: HoldsOf): string {
  if (request.alternatives.length === 1) return describeClaim(request.alternatives[0] as string, holdsOf);
  return `one of: ${request.alternatives.map((name) => describeClaim(name, holdsOf)).join('; ')}`;
}

/** One thing a request asks for, in plain words, and the channels it travels in. */
export interface RequestedItem {
  text: string;
  essential: boolean;
  channels: Channel[];
}

/**
 * What a request asks for, in plain words: scope claims in `scopeChannel` unless the `claims` parameter names them;
 * each as delivery sees it ({@link deliveredRequests}: a name outside `claims_supported` is never delivered, so not
 * asked). Each line once, with every channel it travels in: asks that read alike deliver alike.
 */
export function describeRequest(scope: string | undefined, claimsParameter: string | undefined, scopeChannel: Channel, deliverable: ReadonlySet<string>, holdsOf: HoldsOf = () => undefined): RequestedItem[] {
  let parsed: Record<string, unknown> = {};
  try {
    parsed = claimsParameter ? (JSON.parse(claimsParameter) as Record<string, unknown>) : {};
  } catch {
    // An unreadable parameter asks for nothing beyond the scope.
  }
  const named = new Set<string>();
  const explicit: RequestedItem[] = [];
  const verified: RequestedItem[] = [];
  for (const channel of CHANNELS) {
    for (const request of deliveredRequests(parsed[channel] as ChannelClaims | undefined, deliverable)) {
      if (request.alternatives.length === 0) continue;
      named.add(request.requested);
      explicit.push({ text: describeRequested(request, holdsOf), essential: request.essential, channels: [channel] });
    }
    for (const request of verifiedRequestsOf(parsed[channel])) verified.push({ text: describeVerified(request), essential: false, channels: [channel] });
  }
  const fromScope = claimsForScope(scope).filter((claim) => !named.has(claim)).map((claim): RequestedItem => ({ text: describeClaim(claim, holdsOf), essential: false, channels: [scopeChannel] }));
  const items = new Map<string, RequestedItem>();
  for (const item of [...fromScope, ...explicit, ...verified]) {
    const known = items.get(item.text);
    if (!known) items.set(item.text, item);
    else items.set(item.text, { ...known, essential: known.essential || item.essential, channels: CHANNELS.filter((c) => known.channels.includes(c) || item.channels.includes(c)) });
  }
  return [...items.values()];
}
