import { errors } from 'oidc-provider';

import { GRANT_NAMESPACE } from './grant-namespace.js';
import { isObject, MAX_VALUE_DEPTH } from './request.js';
import type { VerifiedOffer } from './verified.js';

// `verified_claims` requests (Identity Assurance 1.0). No requested claim value is kept: `value`
// filters are accepted only on verification metadata, which is not about the person.

/** The member of a channel that carries Identity Assurance requests. */
export const VERIFIED_CLAIMS = 'verified_claims';

/**
 * One requested piece of evidence. Filters hold the allowed values of `type`, `document_details.type`,
 * `check_details[].check_method` and `record.type` (absent allows any), `maxAge` bounds its `time`
 * in seconds; `members` and the `*Members` name what to deliver besides each object's type.
 */
export interface EvidenceRequest {
  type?: string[];
  documentType?: string[];
  checkMethod?: string[];
  recordType?: string[];
  maxAge?: number;
  members: string[];
  documentMembers?: string[];
  checkMembers?: string[];
  recordMembers?: string[];
}

/** One `verified_claims` request element, normalised. */
export interface VerifiedRequest {
  /** Allowed trust frameworks; absent allows any (`trust_framework` is always delivered). */
  trustFramework?: string[];
  /** Present when `assurance_level` is requested, with its allowed values. */
  assuranceLevel?: { values?: string[] };
  /** Present when `time` is requested, with its `max_age` in seconds. */
  time?: { maxAge?: number };
  evidence?: EvidenceRequest[];
  /** The requested claims, each with whether it was marked essential (which never fails a request). */
  claims: Record<string, boolean>;
}

// The schema's members a request may name besides the evidence's `type`, a document's or record's
// `type`, and a check's `check_method` (those always travel).
const EVIDENCE_MEMBERS = ['check_details', 'document_details', 'record', 'time'] as const;
/** The members of a document's details a request may name besides its `type`: strings, and `issuer` an object of them. */
export const DOCUMENT_MEMBERS = ['document_number', 'personal_number', 'serial_number', 'date_of_issuance', 'date_of_expiry', 'issuer'] as const;
/** The members of a check a request may name besides its `check_method`: strings. */
export const CHECK_MEMBERS = ['organization', 'txn', 'time'] as const;
/** The members of a record a request may name besides its `type`: strings, and `source` an object of them. */
export const RECORD_MEMBERS = ['personal_number', 'created_at', 'date_of_expiry', 'source'] as const;

/**
 * Sub-members that identify the person's document, record or check: the `numbers` detail. A check's `txn` is one
 * reference for every client it travels to, so it links her across pairwise subjects as a document number does.
 */
const NUMBERS: Readonly<Record<NumberedPart, readonly string[]>> = {
  document: ['document_number', 'personal_number', 'serial_number'],
  record: ['personal_number'],
  check: ['txn'],
};

/** The parts of an evidence whose members may identify the person: its document's details, its record, a check. */
export type NumberedPart = 'document' | 'record' | 'check';

/** The members of `spec` that `known` lists; none may filter by value (a document's details are about the person). */
function named(path: string, spec: Record<string, unknown>, known: readonly string[]): string[] {
  const members = known.filter((m) => Object.hasOwn(spec, m));
  for (const m of members) {
    const member = spec[m];
    if (member !== null && !isObject(member)) bad(`${path}.${m}`, 'must be null or an object');
    if (isObject(member) && ('value' in member || 'values' in member)) bad(`${path}.${m}`, 'value and values are not supported on evidence details');
  }
  return members;
}
const MAX_FILTER_VALUES = 32;
/** The stored form's one member: `{"verified_claims": {"svc_vc": [VerifiedRequest, …]}}`. */
const STORED = 'svc_vc';

function bad(path: string, fault: string): never {
  throw new errors.InvalidRequest(`${path}: ${fault}`);
}

/** A `verified_claims` member's weight in the claims budget, from its structure: claims and evidence, 1 at least. */
export function countVerifiedClaims(spec: unknown): number {
  const elements = Array.isArray(spec) ? spec : [spec];
  let count = 0;
  for (const element of elements) {
    const claims = isObject(element) && isObject(element.claims) ? Object.keys(element.claims).length : 0;
    const verification = isObject(element) ? element.verification : undefined;
    const evidence = isObject(verification) && Array.isArray(verification.evidence) ? verification.evidence.length : 0;
    count += Math.max(1, claims) + evidence;
  }
  return count;
}

function checkCommon(path: string, spec: Record<string, unknown>): void {
  if (spec.essential !== undefined && typeof spec.essential !== 'boolean') bad(path, 'essential must be true or false');
  // Characters, not UTF-16 code units: an emoji is one character of a purpose.
  const characters = typeof spec.purpose === 'string' ? [...spec.purpose].length : 0;
  if (spec.purpose !== undefined && (characters < 3 || characters > 300)) {
    bad(path, 'purpose must be a string of 3 to 300 characters');
  }
}

/** A `value`/`values` filter: `undefined` when it allows any value. */
function filterOf(path: string, spec: unknown): string[] | undefined {
  if (spec === null) return undefined;
  if (!isObject(spec)) return bad(path, 'must be null or an object');
  checkCommon(path, spec);
  if ('max_age' in spec) bad(path, 'max_age is not supported here (it filters the time of the verification or of an evidence)');
  if ('value' in spec && 'values' in spec) bad(path, 'value and values cannot both be given');
  if ('value' in spec) return typeof spec.value === 'string' ? [spec.value] : bad(path, 'value must be a string');
  if ('values' in spec) {
    const { values } = spec;
    if (!Array.isArray(values) || values.length === 0 || values.length > MAX_FILTER_VALUES || !values.every((v) => typeof v === 'string')) {
      bad(path, `values must be an array of 1 to ${MAX_FILTER_VALUES} strings`);
    }
    return [...new Set(values)];
  }
  return undefined;
}

/** Members whose constraints are evaluated nowhere: a constraint in them is refused, never ignored. */
const CONSTRAINTS = ['value', 'values', 'max_age'];

const NOT_HERE = 'is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)';

/**
 * Refuses a filter outside `evaluated`, one of `spec`'s own members included (`{"type": null, "value": "document"}`):
 * one the provider does not apply would deliver what was excluded.
 */
function refuseOtherFilters(path: string, spec: Record<string, unknown>, evaluated: readonly string[]): void {
  const own = CONSTRAINTS.find((c) => Object.hasOwn(spec, c));
  if (own) bad(path, `${own} ${NOT_HERE}`);
  const pending: [string, unknown, number][] = Object.entries(spec)
    .filter(([name]) => !evaluated.includes(name))
    .map(([name, member]) => [`${path}.${name}`, member, 1]);
  while (pending.length > 0) {
    const [at, item, depth] = pending.pop() as [string, unknown, number];
    if (item === null || typeof item !== 'object') continue;
    if (depth > MAX_VALUE_DEPTH) bad(at, `is nested more than ${MAX_VALUE_DEPTH} levels deep`);
    if (Array.isArray(item)) item.forEach((v, i) => pending.push([`${at}[${i}]`, v, depth + 1]));
    else if (isObject(item)) {
      const constraint = CONSTRAINTS.find((c) => Object.hasOwn(item, c));
      if (constraint) bad(at, `${constraint} ${NOT_HERE}`);
      for (const [name, member] of Object.entries(item)) pending.push([`${at}.${name}`, member, depth + 1]);
    }
  }
}

function timeOf(path: string, spec: unknown): { maxAge?: number } {
  if (spec === null) return {};
  if (!isObject(spec)) return bad(path, 'must be null or an object');
  checkCommon(path, spec);
  if ('value' in spec || 'values' in spec) bad(path, 'filter time with max_age');
  if (spec.max_age === undefined) return {};
  if (typeof spec.max_age !== 'number' || !Number.isSafeInteger(spec.max_age) || spec.max_age < 0) bad(path, 'max_age must be a non-negative integer (seconds)');
  return { maxAge: spec.max_age };
}

/** Reads a requested `document_details` or `record` into `request`: its `type` filter and the members it names. */
function readDetails(request: EvidenceRequest, path: string, spec: unknown, of: 'document' | 'record'): void {
  if (spec === null) return;
  if (!isObject(spec)) return bad(path, 'must be null or an object');
  const type = 'type' in spec ? filterOf(`${path}.type`, spec.type) : undefined;
  const members = named(path, spec, of === 'document' ? DOCUMENT_MEMBERS : RECORD_MEMBERS);
  refuseOtherFilters(path, spec, ['type']);
  if (type) request[`${of}Type` as const] = type;
  if (members.length > 0) request[`${of}Members` as const] = members;
}

function evidenceOf(path: string, spec: unknown): EvidenceRequest[] {
  if (!Array.isArray(spec) || spec.length === 0) return bad(path, 'must be a non-empty array of objects');
  return spec.map((item, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(item)) return bad(at, 'must be an object');
    const request: EvidenceRequest = { members: [] };
    const type = 'type' in item ? filterOf(`${at}.type`, item.type) : undefined;
    if (type) request.type = type;
    const { maxAge } = 'time' in item ? timeOf(`${at}.time`, item.time) : {};
    if (maxAge !== undefined) request.maxAge = maxAge;
    refuseOtherFilters(at, item, ['type', 'time', 'document_details', 'record', 'check_details']);
    for (const member of EVIDENCE_MEMBERS) if (member in item) request.members.push(member);
    if ('document_details' in item) readDetails(request, `${at}.document_details`, item.document_details, 'document');
    if ('record' in item) readDetails(request, `${at}.record`, item.record, 'record');
    if ('check_details' in item && item.check_details !== null) {
      const checks = item.check_details;
      if (!Array.isArray(checks) || checks.length === 0) return bad(`${at}.check_details`, 'must be null or a non-empty array of objects');
      const methods = new Set<string>();
      const members = new Set<string>();
      let any = false;
      checks.forEach((check, j) => {
        const atCheck = `${at}.check_details[${j}]`;
        if (!isObject(check)) return bad(atCheck, 'must be an object');
        for (const m of named(atCheck, check, CHECK_MEMBERS)) members.add(m);
        refuseOtherFilters(atCheck, check, ['check_method']);
        const method = 'check_method' in check ? filterOf(`${atCheck}.check_method`, check.check_method) : undefined;
        if (method) for (const m of method) methods.add(m);
        else any = true;
      });
      if (!any && methods.size > 0) request.checkMethod = [...methods];
      if (members.size > 0) request.checkMembers = CHECK_MEMBERS.filter((m) => members.has(m));
    }
    return request;
  });
}

function claimsOf(path: string, spec: unknown, offer: VerifiedOffer): Record<string, boolean> {
  if (!isObject(spec)) return bad(path, 'must be an object naming the verified claims requested');
  const names = Object.keys(spec);
  if (names.length === 0) bad(path, 'must name at least one claim');
  const offered = new Set(offer.claims);
  const out: Record<string, boolean> = {};
  for (const name of names) {
    const member = spec[name];
    const at = `${path}.${name}`;
    if (!offered.has(name)) bad(at, 'is not a claim this provider verifies (see claims_in_verified_claims_supported)');
    if (member !== null && !isObject(member)) bad(at, 'must be null or an object');
    if (isObject(member)) {
      checkCommon(at, member);
      if ('value' in member || 'values' in member) bad(at, 'value and values are not supported on verified claims (filter the verification instead)');
      if ('max_age' in member) bad(at, 'max_age is not supported on verified claims (filter the time of the verification instead)');
    }
    out[name] = isObject(member) && member.essential === true;
  }
  return out;
}

function elementOf(path: string, element: unknown, offer: VerifiedOffer): VerifiedRequest {
  if (!isObject(element)) return bad(path, 'must be an object with verification and claims');
  const { verification } = element;
  if (!isObject(verification)) return bad(`${path}.verification`, 'is required and must be an object');
  refuseOtherFilters(path, element, ['verification', 'claims']);
  const request: VerifiedRequest = { claims: claimsOf(`${path}.claims`, element.claims, offer) };
  const v = `${path}.verification`;
  const trustFramework = 'trust_framework' in verification ? filterOf(`${v}.trust_framework`, verification.trust_framework) : undefined;
  if (trustFramework) request.trustFramework = trustFramework;
  if ('assurance_level' in verification) {
    const allowed = filterOf(`${v}.assurance_level`, verification.assurance_level);
    request.assuranceLevel = allowed ? { values: allowed } : {};
  }
  if ('time' in verification) request.time = timeOf(`${v}.time`, verification.time);
  if ('evidence' in verification) request.evidence = evidenceOf(`${v}.evidence`, verification.evidence);
  refuseOtherFilters(v, verification, ['trust_framework', 'assurance_level', 'time', 'evidence']);
  return request;
}

/**
 * Parses the `verified_claims` member of `channel` (an object or a non-empty array of them).
 * @throws `invalid_request` naming the member at fault.
 */
export function parseVerifiedClaims(channel: string, spec: unknown, offer: VerifiedOffer | undefined): VerifiedRequest[] {
  const path = `claims.${channel}.${VERIFIED_CLAIMS}`;
  if (!offer) return bad(path, 'no claim module provides verified claims');
  if (Array.isArray(spec)) {
    if (spec.length === 0) bad(path, 'must be an object or a non-empty array');
    return spec.map((element, i) => elementOf(`${path}[${i}]`, element, offer));
  }
  return [elementOf(path, spec, offer)];
}

/** The stored form of parsed requests (what the interaction, the code and the access token keep). */
export function storedVerified(requests: readonly VerifiedRequest[]): Record<string, unknown> {
  return { [STORED]: requests };
}

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** The sub-members each stored list may hold: any other is dropped on reading. */
const STORED_LISTS = { members: EVIDENCE_MEMBERS, documentMembers: DOCUMENT_MEMBERS, checkMembers: CHECK_MEMBERS, recordMembers: RECORD_MEMBERS };

function readStoredEvidence(e: Record<string, unknown>): EvidenceRequest {
  const request: EvidenceRequest = { members: [] };
  for (const filter of ['type', 'documentType', 'checkMethod', 'recordType'] as const) {
    const allowed = e[filter];
    if (strings(allowed)) request[filter] = allowed;
  }
  if (typeof e.maxAge === 'number') request.maxAge = e.maxAge;
  for (const [list, known] of Object.entries(STORED_LISTS) as [keyof typeof STORED_LISTS, readonly string[]][]) {
    const stored = e[list];
    const kept = strings(stored) ? stored.filter((m) => known.includes(m)) : [];
    if (kept.length > 0 || list === 'members') request[list] = kept;
  }
  return request;
}

function readStored(item: unknown): VerifiedRequest | undefined {
  if (!isObject(item) || !isObject(item.claims)) return undefined;
  const claims: Record<string, boolean> = {};
  for (const [name, essential] of Object.entries(item.claims)) if (typeof essential === 'boolean') claims[name] = essential;
  const request: VerifiedRequest = { claims };
  if (strings(item.trustFramework)) request.trustFramework = item.trustFramework;
  if (isObject(item.assuranceLevel)) request.assuranceLevel = strings(item.assuranceLevel.values) ? { values: item.assuranceLevel.values } : {};
  if (isObject(item.time)) request.time = typeof item.time.maxAge === 'number' ? { maxAge: item.time.maxAge } : {};
  if (Array.isArray(item.evidence)) request.evidence = item.evidence.filter(isObject).map(readStoredEvidence);
  return request;
}

/** The requests of a channel's stored form (`claims.<channel>` as stored); none for anything else. */
export function verifiedRequestsOf(channelClaims: unknown): VerifiedRequest[] {
  const stored = isObject(channelClaims) ? channelClaims[VERIFIED_CLAIMS] : undefined;
  const list = isObject(stored) ? stored[STORED] : undefined;
  if (!Array.isArray(list)) return [];
  return list.map(readStored).filter((r): r is VerifiedRequest => r !== undefined);
}

/** No claim name has this prefix. */
const VERIFIED_GRANT_PREFIX = `${GRANT_NAMESPACE}verified:`;

/** The grant name recording consent to verified claim `name`. */
export const verifiedClaimGrant = (name: string): string => `${VERIFIED_GRANT_PREFIX}claim:${name}`;

/** A verification detail a grant records consent to, per verified claim. */
export type VerifiedDetail = 'evidence' | 'time' | 'assurance_level' | 'numbers';

/** The grant name recording consent to `detail` of the verifications of verified claim `claim`. */
export const verifiedDetailGrant = (detail: VerifiedDetail, claim: string): string => `${VERIFIED_GRANT_PREFIX}detail:${detail}:${claim}`;

/** Whether `request` asks when its verification was made (of the verification, an evidence or a check). */
export const asksTime = (request: VerifiedRequest): boolean =>
  request.time !== undefined || (request.evidence ?? []).some((e) => e.members.includes('time') || (e.checkMembers ?? []).includes('time'));

/** Whether `member` of a document's details (`document`), a record or a check identifies it. */
export const isNumber = (of: NumberedPart, member: string): boolean => NUMBERS[of].includes(member);

/** Whether `request` asks for the number of a document or record checked, or the reference of a check. */
export const asksNumbers = (request: VerifiedRequest): boolean =>
  (request.evidence ?? []).some((e) => (['document', 'record', 'check'] as const).some((of) => (e[`${of}Members`] ?? []).some((m) => isNumber(of, m))));

/** The grant names covering `requests`: each verified claim and each detail asked with it (not the trust framework). */
export function verifiedGrantNames(requests: readonly VerifiedRequest[]): string[] {
  const names = new Set<string>();
  for (const r of requests) {
    const details: VerifiedDetail[] = [];
    if (r.evidence) details.push('evidence');
    if (asksTime(r)) details.push('time');
    if (r.assuranceLevel) details.push('assurance_level');
    if (asksNumbers(r)) details.push('numbers');
    for (const claim of Object.keys(r.claims)) {
      names.add(verifiedClaimGrant(claim));
      for (const detail of details) names.add(verifiedDetailGrant(detail, claim));
    }
  }
  return [...names];
}

/** The grant names both channels of a stored `claims` parameter need ({@link verifiedGrantNames}). */
export function verifiedGrantNamesOf(claims: unknown): string[] {
  if (!isObject(claims)) return [];
  return verifiedGrantNames([...verifiedRequestsOf(claims.userinfo), ...verifiedRequestsOf(claims.id_token)]);
}
