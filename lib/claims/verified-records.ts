import { assertClaimType, invalidAnswer } from './claim-types.js';
import { isObject } from './request.js';
import type { Evidence, EvidenceCheck, VerifiedRecord } from './verified.js';
import { CHECK_MEMBERS, DOCUMENT_MEMBERS, RECORD_MEMBERS } from './verified-request.js';

// A module's verified data read as the Identity Assurance Schema Definition 1.0 types what an answer can carry:
// another type fails the request, a null member is one she lacks, a member the schema does not name is not read.

type Json = Record<string, unknown>;

/** `json`'s own member `name`, `undefined` for a `null` one (she lacks it). */
const member = (json: Json, name: string): unknown => (Object.hasOwn(json, name) ? (json[name] ?? undefined) : undefined);

/** `json`'s member `name` as a string; absent when `undefined` or `null`, unless `required`. */
function text(json: Json, name: string, required = false): string | undefined {
  const value = member(json, name);
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string') throw invalidAnswer(name);
  return value;
}

/** The members `names` of `json` that hold a string, but `nested`, an object of strings (an issuer, a source). */
function texts(json: Json, names: readonly string[], nested?: string): Json {
  const out: [string, unknown][] = names.filter((name) => name !== nested).flatMap((name) => {
    const value = text(json, name);
    return value === undefined ? [] : [[name, value]];
  });
  const parts = nested === undefined ? undefined : object(json, nested);
  if (parts && nested) {
    // Named by the schema's member, never by one of the module's own keys (a key may be a value: a document number).
    const held = Object.entries(parts).filter(([, part]) => part !== null);
    if (!held.every(([, part]) => typeof part === 'string')) throw invalidAnswer(nested);
    out.push([nested, Object.fromEntries(held)]);
  }
  // Own members whatever their name: a `__proto__` of the module's JSON stays a member.
  return Object.fromEntries(out);
}

function object(json: Json, name: string): Json | undefined {
  const value = member(json, name);
  if (value !== undefined && !isObject(value)) throw invalidAnswer(name);
  return value;
}

function objects(json: Json, name: string): Json[] | undefined {
  const value = member(json, name);
  if (value !== undefined && !(Array.isArray(value) && value.every(isObject))) throw invalidAnswer(name);
  return value;
}

/** The required string that says what a verification, a piece of evidence, a document, a record or a check is. */
const kind = (json: Json, name = 'type'): string => text(json, name, true) as string;

function evidenceOf(json: Json): Evidence {
  const evidence: Evidence = { type: kind(json), ...texts(json, ['time']) };
  const document = object(json, 'document_details');
  if (document) evidence.document_details = { ...texts(document, DOCUMENT_MEMBERS, 'issuer'), type: kind(document) };
  const record = object(json, 'record');
  if (record) evidence.record = { ...texts(record, RECORD_MEMBERS, 'source'), type: kind(record) };
  const checks = objects(json, 'check_details');
  if (checks) evidence.check_details = checks.map((check): EvidenceCheck => ({ ...texts(check, CHECK_MEMBERS), check_method: kind(check, 'check_method') }));
  return evidence;
}

function recordOf(json: unknown): VerifiedRecord {
  if (!isObject(json)) throw invalidAnswer('verified_claims');
  const verification = object(json, 'verification');
  if (!verification) throw invalidAnswer('verification');
  const claims = object(json, 'claims');
  if (!claims) throw invalidAnswer('claims');
  const held = Object.entries(claims).filter(([name, value]) => {
    if (value !== null) assertClaimType(name, value);
    return value !== null;
  });
  const evidence = objects(verification, 'evidence');
  return {
    verification: {
      trust_framework: kind(verification, 'trust_framework'),
      ...texts(verification, ['assurance_level', 'time']),
      ...(evidence ? { evidence: evidence.map(evidenceOf) } : {}),
    },
    claims: Object.fromEntries(held),
  };
}

/**
 * A module's answer to `verified.resolve`, as its JSON, read as verified records.
 * @throws {@link invalidAnswer} naming the member of another type than the schema gives it.
 */
export function readVerifiedRecords(json: unknown): VerifiedRecord[] {
  if (!Array.isArray(json)) throw invalidAnswer('verified_claims');
  return json.map(recordOf);
}
