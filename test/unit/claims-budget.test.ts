import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Client } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { ClaimRegistry } from '../../lib/index.js';
import { rewriteClaimsParameter } from '../../lib/claims/authorization.js';
import { CLAIMS_BUDGET, decodeClaimsParameter } from '../../lib/claims/budget.js';
import { countClaimNames, expandClaimName, expandClaimTree, ExpansionBudget, parseClaimName, printClaimName, type ClaimNameTree, type PathNode } from '../../lib/claims/syntax.js';
import { ClaimValueMac } from '../../lib/claims/value-mac.js';
import { bracketFlood, bytesOf, namesAcrossChannels, paddedTo, type ClaimsObject } from '../helpers/claims-requests.js';

const registry = new ClaimRegistry(createDemoClaimModules());
const mac = new ClaimValueMac(['claims-budget-test-cookie-key']);
const encrypting = { clientId: 'unit-rp', idTokenEncryptedResponseAlg: 'RSA-OAEP-256', userinfoEncryptedResponseAlg: 'RSA-OAEP-256' } as unknown as Client;

/** Checks `claims` as the authorization endpoint does; returns the error (if any) and the budget used. */
function check(claims: ClaimsObject, text = JSON.stringify(claims)): { error?: { error: string; error_description: string }; budget: ExpansionBudget } {
  const budget = new ExpansionBudget(CLAIMS_BUDGET.maxNames);
  try {
    rewriteClaimsParameter(text, claims, encrypting, registry, mac, budget);
    return { budget };
  } catch (err) {
    return { error: err as { error: string; error_description: string }, budget };
  }
}

describe('the claims budget (C5, issue 14): 256 names counted before expansion, 8 KiB', () => {
  it('refuses the attack of issue 14 (96 names × 129 expansions) by counting: no name is expanded', () => {
    const attack = { userinfo: bracketFlood(96) };
    const { error, budget } = check(attack);
    expect(error).toMatchObject({ error: 'invalid_request', error_description: 'the claims parameter expands to 12384 claim names; at most 256 are allowed' });
    expect(budget.materialized).toBe(0);
  });

  it('refuses the long form of the attack (14.8 KB) on its size, before parsing a name', () => {
    const attack = { userinfo: bracketFlood(96, 'verification-procedure-variant-with-a-long-descriptive-segment-name-and-more-') };
    expect(bytesOf(attack)).toBeGreaterThan(14_000);
    expect(check(attack).error).toMatchObject({ error_description: `the claims parameter is ${bytesOf(attack)} bytes; at most 8192 are allowed` });
    // The size alone decides: the same text refuses whatever object it claims to be.
    let caught: unknown;
    try {
      decodeClaimsParameter(JSON.stringify(attack), {});
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ error_description: `the claims parameter is ${bytesOf(attack)} bytes; at most 8192 are allowed` });
  });

  it('sums both channels: 257 names split over id_token and userinfo are refused, 256 accepted and expanded exactly', () => {
    const over = namesAcrossChannels(257);
    expect(Object.keys(over.id_token ?? {}).length).toBeGreaterThan(0);
    expect(Object.keys(over.userinfo ?? {}).length).toBeGreaterThan(0);
    const refused = check(over);
    expect(refused.error).toMatchObject({ error: 'invalid_request', error_description: 'the claims parameter expands to 257 claim names; at most 256 are allowed' });
    expect(refused.budget.materialized).toBe(0);
    const accepted = check(namesAcrossChannels(256));
    expect(accepted.error).toBeUndefined();
    expect(accepted.budget.materialized).toBe(256);
  });

  it('counts the same name in both channels twice, and plain names and protocol names as one each', () => {
    const big = 'svc.ver.[email.l2,[a,b,c,d].[a,b,c,d].[a,b,c]]'; // 1 + 48 = 49
    const claims = { id_token: { [big]: null, sub: null, name: null }, userinfo: { [big]: null } };
    expect(decodeClaimsParameter(JSON.stringify(claims), claims).id_token?.map((m) => m.count)).toEqual([49, 1, 1]);
    const five = { id_token: { a: null }, userinfo: Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`svc.ver.[email.l2,${'[a,b,c,d].'.repeat(3)}x${i}]`, null])) };
    expect(check(five).error?.error_description).toBe(`the claims parameter expands to ${1 + 5 * 65} claim names; at most 256 are allowed`);
  });

  it('refuses 8193 bytes and accepts 8192, counting UTF-8 bytes, not characters', () => {
    const base = { id_token: { email: null } };
    expect(check(paddedTo(base, 8192)).error).toBeUndefined();
    expect(check(paddedTo(base, 8193)).error).toMatchObject({ error: 'invalid_request', error_description: 'the claims parameter is 8193 bytes; at most 8192 are allowed' });
    const wide = paddedTo(base, 8193, 'ä');
    expect(JSON.stringify(wide).length).toBeLessThan(4200);
    expect(check(wide).error).toMatchObject({ error_description: 'the claims parameter is 8193 bytes; at most 8192 are allowed' });
    expect(check(paddedTo(base, 8192, '€')).error).toBeUndefined();
  });

  it('keeps the per-name errors of malformed names, and their order, inside the budget', () => {
    const tooMany = 'svc.ver.[a,b,c,d].[a,b,c,d].[a,b,c,d].[a,b,c,d].[a,b]';
    expect(check({ userinfo: { [tooMany]: null } }).error?.error_description).toBe(`claim ${tooMany}: more than 256 alternatives at offset 0`);
    // An earlier member's fault is still reported first.
    expect(check({ userinfo: { email: { values: ['a'] }, 'svc.ver.[x': null } }).error?.error_description).toBe(
      'claims.userinfo.email: the values member is not supported (request one value with value)',
    );
    // A malformed name counts as one name: within the budget it is refused for its fault, beyond
    // the budget the request is refused for the budget (parsing is linear, nothing was expanded).
    const malformed = (n: number) => ({ userinfo: Object.fromEntries(Array.from({ length: n }, (_, i) => [`svc.ver.[m${i}`, null])) });
    expect(check(malformed(200)).error?.error_description).toBe('claim svc.ver.[m0: unbalanced [: no closing ] at offset 8');
    expect(check(malformed(300)).error?.error_description).toBe('the claims parameter expands to 300 claim names; at most 256 are allowed');
  });

  it('stops an expansion that would overdraw the budget, taking nothing', () => {
    const budget = new ExpansionBudget(10);
    expect(expandClaimTree(parseClaimName('svc.ver.[a,b,c].[d,e]'), budget)).toHaveLength(6);
    expect(() => expandClaimTree(parseClaimName('svc.ver.[a,b,c,d,e]'), budget)).toThrow(RangeError);
    expect(budget.materialized).toBe(6);
  });
});

describe('counting concrete names without materialising them (fast-check)', () => {
  const segment = fc.stringMatching(/^[a-z0-9]{1,3}$/);
  const path: fc.Arbitrary<PathNode> = fc.letrec<{ path: PathNode; item: PathNode['items'][number] }>((tie) => ({
    path: fc.array(tie('item'), { minLength: 1, maxLength: 4 }).map((items) => ({ kind: 'path' as const, items })),
    item: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      segment.map((value) => ({ kind: 'segment' as const, value })),
      fc.array(tie('path'), { minLength: 1, maxLength: 4 }).map((options) => ({ kind: 'alternatives' as const, options })),
    ),
  })).path;
  const tree: fc.Arbitrary<ClaimNameTree> = fc.record({ family: fc.constantFrom('ver' as const, 'auth' as const), path });

  it('the count equals the number of expansions, or exceeds the per-name limit exactly when expanding refuses', () => {
    fc.assert(
      fc.property(tree, (t) => {
        const text = printClaimName(t);
        if (text.length > 1024) return true;
        let parsed: ClaimNameTree;
        try {
          parsed = parseClaimName(text);
        } catch {
          // Refused for too many alternatives (or nesting): the count said so, or the parser did.
          return true;
        }
        expect(countClaimNames(parsed)).toBe(expandClaimName(text).length);
        return true;
      }),
      { numRuns: 1000 },
    );
  });
});
