import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';

import type { JWK } from 'jose';

import { EC_SIGNING_ALG } from '../../policies/jwk-rules.js';
import { SIGNING_ALG_VALUES } from '../../policies/supported-algorithms.js';

/**
 * Where a provider key stands in a rotation (`svc_state` in the keys file; absent means `current`):
 * - `next`: published in the JWKS, never signs — relying parties learn it before it is used;
 * - `current`: signs (and is published);
 * - `retiring`: published so tokens it signed keep verifying, never signs; dropped by the next
 *   rotation once it has been retiring for {@link RETIRE_AFTER_SECONDS}.
 *
 * A decryption key (`use: "enc"`) is published only while `current`; `next` and `retiring` it only decrypts
 * ({@link unpublishedKids}).
 */
export type KeyState = 'next' | 'current' | 'retiring';

/** The states, in the order the provider is given its keys (the first fitting key signs). */
const KEY_STATES: readonly KeyState[] = ['current', 'next', 'retiring'];

/** How long a key stays published after it stopped signing: the ID token's lifetime (24 h, C3; a test keeps them equal). */
export const RETIRE_AFTER_SECONDS = 86_400;

/** A key of the keys file with its rotation members. */
export type StatefulJwk = JWK & { svc_state?: unknown; svc_since?: unknown };

/** The state of a key (`current` when the file says nothing). */
export function stateOf(key: StatefulJwk): KeyState {
  return (key.svc_state as KeyState | undefined) ?? 'current';
}

/** When the key entered its state, epoch seconds (0 when the file does not say). */
export function sinceOf(key: StatefulJwk): number {
  return typeof key.svc_since === 'number' ? key.svc_since : 0;
}

/** The rotation members of a key are well formed; returns a fault, or undefined. */
export function stateFault(key: StatefulJwk): string | undefined {
  if (key.svc_state !== undefined && !KEY_STATES.includes(key.svc_state as KeyState)) return `has svc_state ${JSON.stringify(key.svc_state)}; expected next, current or retiring`;
  // Below 10^11 (the year 5138): a larger value is milliseconds, or beyond any date keys status could print.
  if (key.svc_since !== undefined && !(typeof key.svc_since === 'number' && Number.isInteger(key.svc_since) && key.svc_since >= 0 && key.svc_since < 1e11)) {
    return 'has an svc_since that is not epoch seconds';
  }
  return undefined;
}

const CURVE_OF: Record<string, string> = Object.fromEntries(Object.entries(EC_SIGNING_ALG).map(([crv, alg]) => [alg, crv]));

/**
 * The key oidc-provider signs `alg` with, given `keys` in its order: mirrors its selection (fitting
 * kty, curve, `alg`, `use`, `key_ops`; a point each for `alg` and `use`; first of equals wins).
 */
export function signingKeyFor(alg: string, keys: readonly JWK[]): JWK | undefined {
  const kty = alg.startsWith('ES') ? 'EC' : 'RSA';
  const crv = CURVE_OF[alg];
  // oidc-provider gives a key its only fitting alg (an EC signing key: its curve's), and `use: sig`
  // to a key that can only sign (one labelled with a signing alg).
  const effectiveAlg = (k: JWK): string | undefined => k.alg ?? (k.kty === 'EC' && k.use === 'sig' ? EC_SIGNING_ALG[String(k.crv)] : undefined);
  const effectiveUse = (k: JWK): string | undefined => k.use ?? (k.alg !== undefined && /^(RS|PS|ES)\d+$/.test(k.alg) ? 'sig' : undefined);
  const candidates = keys.filter(
    (k) =>
      k.kty === kty &&
      (crv === undefined || k.crv === crv) &&
      (effectiveAlg(k) === undefined || effectiveAlg(k) === alg) &&
      (k.use === undefined || k.use === 'sig') &&
      (!Array.isArray(k.key_ops) || k.key_ops.includes('sign')),
  );
  const score = (k: JWK): number => (effectiveAlg(k) ? 1 : 0) + (effectiveUse(k) ? 1 : 0);
  return candidates.reduce<JWK | undefined>((best, k) => (best === undefined || score(k) > score(best) ? k : best), undefined);
}

/** Which key signs each signing alg the provider offers (`alg → kid`), for logs and status. */
export function signingKids(keys: readonly JWK[]): Record<string, string> {
  const kids = SIGNING_ALG_VALUES.map((alg): [string, string | undefined] => [alg, signingKeyFor(alg, keys)?.kid]);
  return Object.fromEntries(kids.filter((entry): entry is [string, string] => Boolean(entry[1])));
}

/** A set of provider keys in its order, with the kids of those held unpublished. */
interface HeldKeys {
  keys: readonly JWK[];
  unpublished: readonly string[];
}

/**
 * What a reload from the keys `before` to `after` does that the rotation steps, each followed by a reload, never do:
 * `dropped`, the kids that signed until now and are published no more (ID tokens they signed stop verifying);
 * `unannounced`, the kids that sign from now on an alg signed until now and were not published until now (a relying party
 * holding the JWKS meets an unknown kid).
 */
export function swappedSigners(before: HeldKeys, after: HeldKeys): { dropped: string[]; unannounced: string[] } {
  const published = (set: HeldKeys): Set<string> => new Set(set.keys.map((k) => String(k.kid)).filter((kid) => !set.unpublished.includes(kid)));
  const [signed, signs] = [signingKids(before.keys), signingKids(after.keys)];
  const [was, is] = [published(before), published(after)];
  // Under an alg no key signed until now no client signed in (oidc-provider refuses it), so none holds a JWKS to miss its key in.
  const unannounced = Object.entries(signs).filter(([alg, kid]) => alg in signed && !was.has(kid));
  return { dropped: [...new Set(Object.values(signed))].filter((kid) => !is.has(kid)), unannounced: [...new Set(unannounced.map(([, kid]) => kid))] };
}

/**
 * Why `after` may not replace the keys `before` in a running provider, or undefined: it gives a kid of theirs to another
 * key (another public key). A relying party looks a key up by kid and fetches the JWKS again only for one it lacks, so
 * it would go on verifying with (and encrypting to) the old key until its copy expires.
 */
export function reusedKidFault(before: readonly JWK[], after: readonly JWK[]): string | undefined {
  // Compared as keys: the same one may be written otherwise (n with a leading zero byte, padded, in base64).
  const publicKey = (k: JWK): KeyObject => createPublicKey({ key: k as JsonWebKey, format: 'jwk' });
  const held = new Map(before.map((k) => [k.kid, k]));
  const reused = after.filter((k) => held.has(k.kid) && !publicKey(held.get(k.kid) as JWK).equals(publicKey(k))).map((k) => String(k.kid));
  if (reused.length === 0) return undefined;
  return `kid ${reused.join(', ')} names another key than the one in use, which relying parties holding the JWKS would go on using; give each new key a kid of its own (keys generate and keys rotate name a key by its thumbprint)`;
}

/** Whether `key` signs none of the algs the provider signs with, as oidc-provider picks keys: a decryption key (`use: "enc"`, an encryption `alg`, or `key_ops` without `sign`). */
const signsNothing = (key: JWK): boolean => SIGNING_ALG_VALUES.every((alg) => signingKeyFor(alg, [key]) === undefined);

/**
 * The kids of the decryption keys that are `next` or `retiring` (however the file marks them for encryption: by `use`,
 * an encryption `alg`, or `key_ops` without `sign`): held to decrypt request objects, never published. While the
 * processes of one provider are reloaded one after another, each publishes only decryption keys that every other one
 * already holds (or still holds), so a relying party encrypts to no key the process it reaches lacks. Signing keys are
 * published in every state: a relying party verifies with them, whichever process signed.
 */
export function unpublishedKids(keys: readonly StatefulJwk[]): string[] {
  return keys.filter((k) => stateOf(k) !== 'current' && signsNothing(k)).map((k) => String(k.kid));
}

/**
 * The kids of the `next` and `retiring` keys that both sign and decrypt (no `use`, `alg` or `key_ops`): published,
 * to verify with, as `use: "sig"`, so no relying party encrypts to one of them ({@link unpublishedKids}).
 */
export function signingOnlyKids(keys: readonly StatefulJwk[]): string[] {
  return keys.filter((k) => stateOf(k) !== 'current' && k.use === undefined && k.alg === undefined && k.key_ops === undefined && !signsNothing(k)).map((k) => String(k.kid));
}

/**
 * The keys in oidc-provider's order (current, next, retiring; each in file order) without their
 * rotation members, or a fault naming a key that is not `current` but would sign some alg.
 */
export function providerOrder(keys: readonly StatefulJwk[]): { keys: JWK[] } | { fault: string } {
  const ordered = KEY_STATES.flatMap((state) => keys.filter((k) => stateOf(k) === state));
  const plain = ordered.map(({ svc_state: _state, svc_since: _since, ...jwk }): JWK => jwk);
  for (const alg of SIGNING_ALG_VALUES) {
    const chosen = signingKeyFor(alg, plain);
    const source = chosen ? ordered[plain.indexOf(chosen)] : undefined;
    if (source && stateOf(source) !== 'current') {
      return { fault: `the ${stateOf(source)} key ${String(source.kid)} would sign ${alg} before every current key; give it the same use and alg members as the current key` };
    }
  }
  return { keys: plain };
}
