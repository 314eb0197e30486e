// Verified data in the shape of OpenID Connect for Identity Assurance 1.0 and its Schema Definition 1.0.

/** One check of a piece of evidence (`check_details` of the schema). */
export interface EvidenceCheck {
  /** A predefined check method (`vcrypt`, `vri`, `pvr`, `data`, `auth`, …). */
  check_method: string;
  organization?: string;
  time?: string;
}

/** One piece of evidence of a verification (`document`, `electronic_record`, …). */
export interface Evidence {
  /** The evidence type: `document`, `electronic_record`, `vouch` or `electronic_signature`. */
  type: string;
  check_details?: readonly EvidenceCheck[];
  /** For `document` evidence: the document's `type` (`idcard`, `driving_permit`, …). */
  document_details?: { type: string; [detail: string]: unknown };
  /** For `electronic_record` evidence: the record's `type`. */
  record?: { type: string; [detail: string]: unknown };
  time?: string;
}

/** How a set of claims was verified (the schema's `verification`). */
export interface Verification {
  trust_framework: string;
  assurance_level?: string;
  /** When the verification was done (ISO 8601 date-time). */
  time?: string;
  evidence?: readonly Evidence[];
}

/** One verification a person holds and the claims it covers. */
export interface VerifiedRecord {
  verification: Verification;
  claims: Readonly<Record<string, unknown>>;
}

/**
 * What a module's verifications can contain, whatever the account: checked against requests before
 * anyone signs in, and advertised in discovery. Each list is a `*_supported` field.
 */
export interface VerifiedOffer {
  trustFrameworks: readonly string[];
  evidence: readonly string[];
  documents: readonly string[];
  documentCheckMethods: readonly string[];
  /** Required when `evidence` has `electronic_record` (IDA 1.0 provider metadata). */
  electronicRecords?: readonly string[];
  /** `claims_in_verified_claims_supported`. */
  claims: readonly string[];
}

/** The verified data a claim module provides ({@link ClaimModule.verified}). */
export interface VerifiedClaimsProvider {
  /** What its verifications can contain. */
  readonly offer: VerifiedOffer;
  /** The verifications `accountId` holds; called only after she consented to the client asking. */
  resolve(accountId: string): Promise<readonly VerifiedRecord[]> | readonly VerifiedRecord[];
}

/** The union of several offers, each list without duplicates; `undefined` for none. */
export function mergeOffers(offers: readonly VerifiedOffer[]): VerifiedOffer | undefined {
  if (offers.length === 0) return undefined;
  const union = (pick: (o: VerifiedOffer) => readonly string[]): string[] => [...new Set(offers.flatMap(pick))];
  return {
    trustFrameworks: union((o) => o.trustFrameworks),
    evidence: union((o) => o.evidence),
    documents: union((o) => o.documents),
    documentCheckMethods: union((o) => o.documentCheckMethods),
    electronicRecords: union((o) => o.electronicRecords ?? []),
    claims: union((o) => o.claims),
  };
}

/** Discovery's Identity Assurance fields for an offer: exactly what requests can get. */
export function verifiedDiscovery(offer: VerifiedOffer): Record<string, unknown> {
  return {
    verified_claims_supported: true,
    trust_frameworks_supported: [...offer.trustFrameworks],
    evidence_supported: [...offer.evidence],
    ...(offer.documents.length > 0 ? { documents_supported: [...offer.documents] } : {}),
    ...(offer.documentCheckMethods.length > 0 ? { documents_check_methods_supported: [...offer.documentCheckMethods] } : {}),
    ...(offer.electronicRecords?.length ? { electronic_records_supported: [...offer.electronicRecords] } : {}),
    claims_in_verified_claims_supported: [...offer.claims],
  };
}
