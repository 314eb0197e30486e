import type Provider from 'oidc-provider';
import type { Adapter, Grant, Interaction } from 'oidc-provider';

/** The store model of what an Allow added to the grant it extended in place, kept while its interaction lives. */
export const CONSENT_UNDO_MODEL = 'ConsentUndo';

/** OpenID scope and claim names of a grant, or added to one. */
export interface GrantNames {
  scope: string;
  names: string[];
}

/** Withdraws an Allow that she followed with another answer on the same interaction. */
export interface ConsentUndo {
  /**
   * Before an Allow saves her earlier grant of the client extended in place: notes what it added to the grant as
   * `before` had it, once per interaction (a second Allow of it adds nothing of its own).
   */
  extending(details: Interaction, before: GrantNames, after: Grant): Promise<void>;
  /**
   * Before another Allow or a Deny: drops the grant an earlier Allow saved of its own; a Deny also takes out of the
   * grant it extended what that Allow added, and only that (another tab's Allow of the same client stays, but for
   * a name that Allow added first: it goes, and she is asked again).
   */
  withdraw(details: Interaction, denied: boolean): Promise<void>;
}

const scopeSet = (scope: string): Set<string> => new Set(scope.split(' ').filter(Boolean));

/**
 * A consent sent again (a double click, the back button) or followed by Deny keeps only what her last answer
 * approved: a grant an earlier Allow saved is destroyed (never the session's own), and from her earlier grant that an
 * Allow extended in place a Deny takes out what that Allow added.
 */
export function consentUndo(provider: Provider, undo: Adapter): ConsentUndo {
  return {
    async extending(details, before, after) {
      if (await undo.find(details.uid)) return;
      const had = { scope: scopeSet(before.scope), names: new Set(before.names) };
      const added: GrantNames = {
        scope: [...scopeSet(after.getOIDCScope())].filter((s) => !had.scope.has(s)).join(' '),
        names: after.getOIDCClaims().filter((n) => !had.names.has(n)),
      };
      await undo.upsert(details.uid, { ...added }, Math.max(1, details.exp - Math.floor(Date.now() / 1000)));
    },
    async withdraw(details, denied) {
      const earlier = details.result?.consent?.grantId;
      if (earlier && earlier !== details.grantId) await (await provider.Grant.find(earlier))?.destroy();
      if (!denied || !details.grantId) return;
      const added = (await undo.find(details.uid)) as unknown as GrantNames | undefined;
      if (!added) return;
      const grant = await provider.Grant.find(details.grantId);
      if (grant) {
        const [scope, names] = [scopeSet(added.scope), new Set(added.names)];
        grant.openid = {
          scope: [...scopeSet(grant.getOIDCScope())].filter((s) => !scope.has(s)).join(' '),
          claims: grant.getOIDCClaims().filter((n) => !names.has(n)),
        };
        await grant.save();
      }
      await undo.destroy(details.uid);
    },
  };
}
