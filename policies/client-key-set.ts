import type { JWK } from 'jose';

import { candidateDefect, isUnlabelled, keyDefect, keyLabel, keySetDefect, normaliseKeyLabels, PRIVATE_MEMBERS, unfitReason, type RequestedEncryption } from './jwk-rules.js';

/** A refused key: its position in the set (from 0), the sentence naming it, and its rule. */
interface RefusedKey {
  index: number;
  /** `key #2 ("enc-1"): <rule>` (or `key #2 ("enc-1") contains private key material; …`). */
  message: string;
  /** `key`: the key breaks a key rule (C6 items 2, 5, 6); `candidate`: it could be picked and fail (item 7). */
  rule: 'key' | 'candidate';
}

/** What {@link judgeClientKeySet} decided about one JWK Set. */
export interface KeySetJudgement {
  /** Why the set is refused whole, unjudged (not a JWK Set, too many keys, too costly). */
  setDefect?: string;
  /** The keys the provider may hold, in their order, labels normalised. */
  keys: JWK[];
  /** Where each kept key stood in the set, from 0. */
  positions: number[];
  /** Keys that break a rule, in order: every `key` refusal first, then every `candidate` one. */
  refused: RefusedKey[];
  /** Positions of keys left out unjudged for having neither `use` nor `key_ops` while encryption is asked for. */
  dropped: number[];
  /** Requested algorithms no kept key fits, each with a description naming every key and why. */
  unserved: { field: string; alg: string; message: string }[];
}

/** Why `key` is not even a public key of a type we take, before it is judged. */
function shapeDefect(key: unknown, index: number): string | undefined {
  if (!key || typeof key !== 'object' || Array.isArray(key) || typeof (key as JWK).kty !== 'string') return `key #${index + 1} is not a JWK (needs a "kty")`;
  const jwk = key as JWK;
  if (jwk.kty === 'oct') return `${keyLabel(jwk, index)} is a symmetric key; only public RSA, EC and OKP keys are accepted`;
  if (PRIVATE_MEMBERS.some((m) => m in jwk)) return `${keyLabel(jwk, index)} contains private key material; register public keys only`;
  return undefined;
}

/**
 * The one key judgement of C6, alike at registration and at every later fetch of a `jwks_uri`. In order:
 * 1. the set's shape and size ({@link keySetDefect}): a set beyond them is refused whole, unjudged;
 * 2. no key is symmetric or carries private members (every key, labelled or not);
 * 3. when the client asks for encryption (`requested` not empty), keys with neither `use` nor
 *    `key_ops` are left out, unjudged ({@link isUnlabelled});
 * 4. every other key is judged as the key it is ({@link keyDefect});
 * 5. its labels are normalised ({@link normaliseKeyLabels}): what the provider stores and uses;
 * 6. a kept key the provider may pick for a requested algorithm must fit it ({@link candidateDefect});
 * 7. every requested algorithm needs a kept encryption key that fits it ({@link unfitReason}).
 *
 * What a refusal costs is the caller's: registration fails on any, a later fetch leaves refused
 * keys out. Pure; the set is not changed.
 *
 * @param document - the JWK Set as published (not trusted to be well-formed)
 * @param requested - the encryption algorithms the client registered
 */
export function judgeClientKeySet(document: unknown, requested: RequestedEncryption): KeySetJudgement {
  const verdict: KeySetJudgement = { keys: [], positions: [], refused: [], dropped: [], unserved: [] };
  const all = (document as { keys?: unknown } | null)?.keys;
  const isSet = !!document && typeof document === 'object' && !Array.isArray(document) && Array.isArray(all);
  const setDefect = isSet ? keySetDefect(all) : 'must be a JWK Set: an object with a "keys" array';
  if (setDefect !== undefined || !isSet) return { ...verdict, setDefect };
  const shapes = all.map((key, index) => shapeDefect(key, index));
  shapes.forEach((message, index) => {
    if (message !== undefined) verdict.refused.push({ index, message, rule: 'key' });
  });
  const kept: { index: number; key: JWK }[] = [];
  (all as JWK[]).forEach((key, index) => {
    if (shapes[index] !== undefined) return;
    if (requested.length > 0 && isUnlabelled(key)) {
      verdict.dropped.push(index);
      return;
    }
    const defect = keyDefect(key);
    if (defect !== undefined) verdict.refused.push({ index, message: `${keyLabel(key, index)}: ${defect}`, rule: 'key' });
    else kept.push({ index, key: normaliseKeyLabels(key) });
  });
  const fitting = kept.filter(({ key, index }) => {
    const why = candidateDefect(key, requested);
    if (why !== undefined) verdict.refused.push({ index, message: `${keyLabel(key, index)}: ${why}`, rule: 'candidate' });
    return why === undefined;
  });
  verdict.keys = fitting.map(({ key }) => key);
  verdict.positions = fitting.map(({ index }) => index);
  for (const [field, alg] of requested) {
    if (verdict.keys.some((key) => unfitReason(key, alg) === undefined)) continue;
    const reasons = (all as JWK[]).map((original, index) => {
      const held = kept.find((k) => k.index === index)?.key;
      if (verdict.dropped.includes(index)) return `${keyLabel(original, index)}: has neither use nor key_ops, so it is dropped`;
      if (held !== undefined) return `${keyLabel(original, index)}: ${unfitReason(held, alg) ?? 'fits'}`;
      return `${keyLabel(original, index)}: refused (${String(verdict.refused.find((r) => r.index === index)?.message)})`;
    });
    verdict.unserved.push({ field, alg, message: `no key usable for ${field} ${alg} (keys need use=enc or key_ops containing encrypt)${reasons.length ? `; ${reasons.join('; ')}` : '; the set is empty'}` });
  }
  return verdict;
}
