import type { Evidence, VerifiedRecord } from './verified.js';
import { verifiedClaimGrant, verifiedDetailGrant, type EvidenceRequest, type VerifiedRequest } from './verified-request.js';

const allows = (filter: readonly string[] | undefined, value: string | undefined): boolean => filter === undefined || (value !== undefined && filter.includes(value));

function matchesEvidence(request: EvidenceRequest, evidence: Evidence): boolean {
  return (
    allows(request.type, evidence.type) &&
    allows(request.documentType, evidence.document_details?.type) &&
    (request.checkMethod === undefined || (evidence.check_details ?? []).some((c) => request.checkMethod?.includes(c.check_method)))
  );
}

function project(evidence: Evidence, members: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { type: evidence.type };
  for (const member of members) {
    const value = (evidence as unknown as Record<string, unknown>)[member];
    if (value !== undefined) out[member] = value;
  }
  return out;
}

/** The evidence of `record` that `requests` select, or `undefined` when a filter finds none. */
function selectedEvidence(requests: readonly EvidenceRequest[], record: VerifiedRecord): Record<string, unknown>[] | undefined {
  const held = record.verification.evidence ?? [];
  const out: Record<string, unknown>[] = [];
  for (const request of requests) {
    const filtered = request.type !== undefined || request.documentType !== undefined || request.checkMethod !== undefined;
    const hits = held.filter((e) => matchesEvidence(request, e));
    if (filtered && hits.length === 0) return undefined;
    for (const hit of hits) out.push(project(hit, request.members));
  }
  return out;
}

/**
 * The `verified_claims` element `request` gets from `record`, or `undefined` when a filter is not
 * satisfied or none of its claims is held and granted. Verification details travel only when asked
 * for (and granted); `trust_framework` always does.
 */
function elementFor(request: VerifiedRequest, record: VerifiedRecord, granted: ReadonlySet<string>, now: number): Record<string, unknown> | undefined {
  const { verification } = record;
  if (!allows(request.trustFramework, verification.trust_framework)) return undefined;
  if (request.assuranceLevel && !allows(request.assuranceLevel.values, verification.assurance_level)) return undefined;
  if (request.time?.maxAge !== undefined) {
    const at = verification.time === undefined ? Number.NaN : Date.parse(verification.time);
    if (!(now - at <= request.time.maxAge * 1000)) return undefined;
  }
  const evidence = request.evidence ? selectedEvidence(request.evidence, record) : [];
  if (evidence === undefined) return undefined;
  const claims: Record<string, unknown> = {};
  for (const name of Object.keys(request.claims)) {
    if (granted.has(verifiedClaimGrant(name)) && record.claims[name] !== undefined) claims[name] = record.claims[name];
  }
  if (Object.keys(claims).length === 0) return undefined;
  const out: Record<string, unknown> = { trust_framework: verification.trust_framework };
  if (request.assuranceLevel && verification.assurance_level !== undefined && granted.has(verifiedDetailGrant('assurance_level'))) out.assurance_level = verification.assurance_level;
  if (request.time && verification.time !== undefined && granted.has(verifiedDetailGrant('time'))) out.time = verification.time;
  if (request.evidence && evidence.length > 0 && granted.has(verifiedDetailGrant('evidence'))) out.evidence = evidence;
  return { verification: out, claims };
}

/**
 * The `verified_claims` answer for a channel's requests: one element per request element and held
 * record that satisfies it. An unsatisfied filter leaves the element out, essential or not (IDA);
 * `undefined` when nothing is left, an object for one element, an array for several.
 */
export function answerVerified(
  requests: readonly VerifiedRequest[],
  records: readonly VerifiedRecord[],
  granted: ReadonlySet<string>,
  now = Date.now(),
): Record<string, unknown> | Record<string, unknown>[] | undefined {
  const elements: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const request of requests) {
    for (const record of records) {
      const element = elementFor(request, record, granted, now);
      if (!element) continue;
      const key = JSON.stringify(element);
      if (seen.has(key)) continue;
      seen.add(key);
      elements.push(element);
    }
  }
  if (elements.length === 0) return undefined;
  return elements.length === 1 ? elements[0] : elements;
}
