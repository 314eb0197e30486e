import type { Evidence, VerifiedRecord } from './verified.js';
import { isObject } from './request.js';
import { asksNumbers, asksTime, isNumber, verifiedClaimGrant, verifiedDetailGrant, type EvidenceRequest, type NumberedPart, type VerifiedDetail, type VerifiedRequest } from './verified-request.js';

const allows = (filter: readonly string[] | undefined, value: string | undefined): boolean => filter === undefined || (value !== undefined && filter.includes(value));

/** Whether `time` (ISO 8601) is at most `maxAge` seconds before `now`. */
const withinMaxAge = (maxAge: number | undefined, time: string | undefined, now: number): boolean =>
  maxAge === undefined || (time !== undefined && now - Date.parse(time) <= maxAge * 1000);

function matchesEvidence(request: EvidenceRequest, evidence: Evidence, now: number): boolean {
  return (
    allows(request.type, evidence.type) &&
    allows(request.documentType, evidence.document_details?.type) &&
    allows(request.recordType, evidence.record?.type) &&
    withinMaxAge(request.maxAge, evidence.time, now) &&
    (request.checkMethod === undefined || (evidence.check_details ?? []).some((c) => request.checkMethod?.includes(c.check_method)))
  );
}

/** What the person consented to see travel of a verification besides its evidence. */
type Consented = Record<'time' | 'numbers', boolean>;

/** `held`'s `kept` and `named` members, a `time` or a number of `of` only with consent to it; `undefined` for none. */
function pick(held: unknown, kept: string, named: readonly string[] | undefined, consented: Consented, of: NumberedPart): Record<string, unknown> | undefined {
  if (!isObject(held)) return undefined;
  const out: Record<string, unknown> = {};
  for (const member of [kept, ...(named ?? [])]) {
    if (member === 'time' && !consented.time) continue;
    if (isNumber(of, member) && !consented.numbers) continue;
    if (Object.hasOwn(held, member) && held[member] !== undefined) out[member] = held[member];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** What of `evidence` travels: its `type` and what `request` names, within what was consented. */
function project(evidence: Evidence, request: EvidenceRequest, consented: Consented): Record<string, unknown> {
  const out: Record<string, unknown> = { type: evidence.type };
  for (const member of request.members) {
    if (member === 'time') {
      if (consented.time && evidence.time !== undefined) out.time = evidence.time;
    } else if (member === 'document_details' || member === 'record') {
      const of = member === 'record' ? 'record' : 'document';
      const details = pick(evidence[member], 'type', request[`${of}Members` as const], consented, of);
      if (details) out[member] = details;
    } else if (member === 'check_details' && evidence.check_details !== undefined) {
      out.check_details = evidence.check_details.flatMap((c) => pick(c, 'check_method', request.checkMembers, consented, 'check') ?? []);
    }
  }
  return out;
}

/** The evidence of `record` that `requests` select, each distinct piece once; `undefined` when a filter finds none. */
function selectedEvidence(requests: readonly EvidenceRequest[], record: VerifiedRecord, consented: Consented, now: number): Record<string, unknown>[] | undefined {
  const held = record.verification.evidence ?? [];
  const out = new Map<string, Record<string, unknown>>();
  for (const request of requests) {
    const filtered = [request.type, request.documentType, request.recordType, request.checkMethod, request.maxAge].some((f) => f !== undefined);
    const hits = held.filter((e) => matchesEvidence(request, e, now));
    if (filtered && hits.length === 0) return undefined;
    for (const hit of hits) {
      const projected = project(hit, request, consented);
      out.set(JSON.stringify(projected), projected);
    }
  }
  return [...out.values()];
}

/** The element `request` gets from `record` (details only when asked for and granted); `undefined` when unsatisfied. */
function elementFor(request: VerifiedRequest, record: VerifiedRecord, granted: ReadonlySet<string>, now: number): Record<string, unknown> | undefined {
  const { verification } = record;
  if (!allows(request.trustFramework, verification.trust_framework)) return undefined;
  if (request.assuranceLevel && !allows(request.assuranceLevel.values, verification.assurance_level)) return undefined;
  if (!withinMaxAge(request.time?.maxAge, verification.time, now)) return undefined;
  const claims: Record<string, unknown> = {};
  for (const name of Object.keys(request.claims)) {
    if (granted.has(verifiedClaimGrant(name)) && Object.hasOwn(record.claims, name) && record.claims[name] !== undefined) claims[name] = record.claims[name];
  }
  const names = Object.keys(claims);
  if (names.length === 0) return undefined;
  // A detail of this verification travels only when she consented to it for every claim it carries.
  const consented = (detail: VerifiedDetail): boolean => names.every((name) => granted.has(verifiedDetailGrant(detail, name)));
  const withTime = asksTime(request) && consented('time');
  const evidence = request.evidence ? selectedEvidence(request.evidence, record, { time: withTime, numbers: asksNumbers(request) && consented('numbers') }, now) : [];
  if (evidence === undefined) return undefined;
  const out: Record<string, unknown> = { trust_framework: verification.trust_framework };
  if (request.assuranceLevel && verification.assurance_level !== undefined && consented('assurance_level')) out.assurance_level = verification.assurance_level;
  if (request.time && verification.time !== undefined && withTime) out.time = verification.time;
  if (request.evidence && evidence.length > 0 && consented('evidence')) out.evidence = evidence;
  return { verification: out, claims };
}

/** The `verified_claims` answer: one element per satisfied request and record (IDA: unsatisfied ones left out). */
export function answerVerified(
  requests: readonly VerifiedRequest[],
  records: readonly VerifiedRecord[],
  granted: ReadonlySet<string>,
  now = Date.now(),
): Record<string, unknown> | Record<string, unknown>[] | undefined {
  const distinct = new Map<string, Record<string, unknown>>();
  for (const request of requests) {
    for (const record of records) {
      const element = elementFor(request, record, granted, now);
      if (element) distinct.set(JSON.stringify(element), element);
    }
  }
  const elements = [...distinct.values()];
  if (elements.length === 0) return undefined;
  return elements.length === 1 ? elements[0] : elements;
}
