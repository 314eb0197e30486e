import type Provider from 'oidc-provider';
import type { Adapter, Grant, Interaction } from 'oidc-provider';

/** The store model of how an Allow found the grant it extended in place, kept while its interaction lives. */
export const CONSENT_UNDO_MODEL = 'ConsentUndo';

/** The grant's OpenID scope and claim names as the first Allow found them. */
interface GrantBefore {
  scope: string;
  names: string[];
}

/** Withdraws an Allow that she followed with another answer on the same interaction. */
export interface ConsentUndo {
  /** Before an Allow extends her earlier grant of the client in place: notes how it was, once per interaction. */
  extending(details: Interaction, grant: Grant): Promise<void>;
  /** Before another Allow or a Deny: drops the grant an earlier Allow saved of its own; a Deny also puts back the one it extended. */
  withdraw(details: Interaction, denied: boolean): Promise<void>;
}

/**
 * A consent sent again (a double click, the back button) or followed by Deny keeps only what her last answer
 * approved: a grant an earlier Allow saved is destroyed (never the session's own), and her earlier grant that an
 * Allow extended in place is put back as it was before a Deny.
 */
export function consentUndo(provider: Provider, undo: Adapter): ConsentUndo {
  return {
    async extending(details, grant) {
      if (await undo.find(details.uid)) return;
      const before: GrantBefore = { scope: grant.getOIDCScope(), names: grant.getOIDCClaims() };
      await undo.upsert(details.uid, { ...before }, Math.max(1, details.exp - Math.floor(Date.now() / 1000)));
    },
    async withdraw(details, denied) {
      const earlier = details.result?.consent?.grantId;
      if (earlier && earlier !== details.grantId) await (await provider.Grant.find(earlier))?.destroy();
      if (!denied || !details.grantId) return;
      const before = (await undo.find(details.uid)) as unknown as GrantBefore | undefined;
      if (!before) return;
      const grant = await provider.Grant.find(details.grantId);
      if (grant) {
        grant.openid = { scope: before.scope, claims: before.names };
        await grant.save();
      }
      await undo.destroy(details.uid);
    },
  };
}
