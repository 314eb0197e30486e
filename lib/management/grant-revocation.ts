/**
 * The store model of the marks the toolbox leaves on each grant it revokes (one record per grant, named by the
 * reference of its id, as the inventory lists it), kept {@link GRANT_REVOCATION_MARK_SECONDS}: a token request that
 * loaded the grant before it was revoked finds the mark once served, and its answer is withdrawn.
 */
export const GRANT_REVOCATION_MODEL = 'GrantRevocation';

/** How long a revocation mark is kept: far longer than a token request that loaded the grant can still be served. */
export const GRANT_REVOCATION_MARK_SECONDS = 3600;
