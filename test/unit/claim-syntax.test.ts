import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';

import { ClaimSyntaxError } from '../../lib/errors.js';
import { CLAIM_SYNTAX_LIMITS, expandClaimName, parseClaimName, printClaimName, type ClaimNameTree, type PathNode } from '../../lib/claims/syntax.js';

describe('svc.* claim syntax: valid names (C5)', () => {
  it.each<[string, string[]]>([
    ['svc.ver.idcard.l3.nfc', ['svc.ver.idcard.l3.nfc']],
    ['svc.ver.email.l2', ['svc.ver.email.l2']],
    ['svc.auth.mobile.l2.otp', ['svc.auth.mobile.l2.otp']],
    ['svc.ver.[mobile,email].l2', ['svc.ver.mobile.l2', 'svc.ver.email.l2']],
    ['svc.ver.idcard.[l2,l3].[nfc,video]', ['svc.ver.idcard.l2.nfc', 'svc.ver.idcard.l2.video', 'svc.ver.idcard.l3.nfc', 'svc.ver.idcard.l3.video']],
    ['svc.ver.[idcard.l3.nfc,driverslicense.l2]', ['svc.ver.idcard.l3.nfc', 'svc.ver.driverslicense.l2']],
    ['svc.ver.[idcard.[l2,l3],email.l2]', ['svc.ver.idcard.l2', 'svc.ver.idcard.l3', 'svc.ver.email.l2']],
    ['svc.ver.[driverslicense,idcard].l3.nfc', ['svc.ver.driverslicense.l3.nfc', 'svc.ver.idcard.l3.nfc']],
    ['svc.ver.[a]', ['svc.ver.a']],
    ['svc.ver.[[a,b],c]', ['svc.ver.a', 'svc.ver.b', 'svc.ver.c']],
    ['svc.auth.[mobile.l2.otp,email.l0]', ['svc.auth.mobile.l2.otp', 'svc.auth.email.l0']],
    ['svc.ver.passport_x-1.l9', ['svc.ver.passport_x-1.l9']],
  ])('%s', (name, expansions) => {
    expect(expandClaimName(name)).toEqual(expansions);
    expect(printClaimName(parseClaimName(name))).toBe(name);
  });

  it('accepts nesting up to depth 8', () => {
    const name = `svc.ver.${'['.repeat(8)}a${']'.repeat(8)}`;
    expect(expandClaimName(name)).toEqual(['svc.ver.a']);
  });

  it('accepts exactly 256 expansions', () => {
    expect(expandClaimName('svc.ver.[a,b,c,d].[a,b,c,d].[a,b,c,d].[a,b,c,d]')).toHaveLength(256);
  });
});

describe('svc.* claim syntax: malformed names', () => {
  it.each<[string, number, string]>([
    ['svc.ver.[mobile,email.l2', 8, 'unbalanced [: no closing ]'],
    ['svc.ver.mobile].l2', 14, 'unbalanced ]'],
    ['svc.ver.[].l2', 9, 'empty alternatives []'],
    ['svc.ver.[a,].l2', 11, 'empty alternative'],
    ['svc.ver.[,a]', 9, 'empty alternative'],
    ['svc.ver..l2', 8, 'empty segment'],
    ['svc.ver.l2.', 11, 'empty segment'],
    ['svc.ver.', 8, 'empty segment'],
    ['svc.ver.ID.l2', 8, 'bad character "I" (segments are [a-z0-9_-])'],
    ['svc.ver.id card', 10, 'bad character " " (segments are [a-z0-9_-])'],
    ['svc.ver.a[b]', 9, 'expected . before ['],
    ['svc.ver.[a,b]c', 13, 'expected . after ]'],
    ['svc.[ver,auth].x', 4, 'svc claim names start with svc.ver. or svc.auth.'],
    ['svc.foo.x', 4, 'svc claim names start with svc.ver. or svc.auth.'],
    ['svc', 0, 'svc claim names start with svc.ver. or svc.auth.'],
    [`svc.ver.${'['.repeat(9)}a${']'.repeat(9)}`, 16, 'alternatives nested deeper than 8'],
    ['svc.ver.[a,b,c,d].[a,b,c,d].[a,b,c,d].[a,b,c,d].[a,b]', 0, 'more than 256 alternatives'],
    [`svc.ver.${'a'.repeat(1020)}`, 1024, 'longer than 1024 characters'],
  ])('%s → %s', (name, offset, reason) => {
    let caught: unknown;
    try {
      expandClaimName(name);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ClaimSyntaxError);
    expect({ offset: (caught as ClaimSyntaxError).offset, reason: (caught as ClaimSyntaxError).reason }).toEqual({ offset, reason });
    expect((caught as Error).message).toContain(`at offset ${offset}`);
  });
});

describe('svc.* claim syntax: properties (fast-check)', () => {
  const segment = fc.stringMatching(/^[a-z0-9_-]{1,6}$/);
  const path: fc.Arbitrary<PathNode> = fc.letrec<{ path: PathNode; item: PathNode['items'][number] }>((tie) => ({
    path: fc.array(tie('item'), { minLength: 1, maxLength: 3 }).map((items) => ({ kind: 'path' as const, items })),
    item: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      segment.map((value) => ({ kind: 'segment' as const, value })),
      fc.array(tie('path'), { minLength: 1, maxLength: 3 }).map((options) => ({ kind: 'alternatives' as const, options })),
    ),
  })).path;
  const tree: fc.Arbitrary<ClaimNameTree> = fc.record({ family: fc.constantFrom('ver' as const, 'auth' as const), path });

  it('printing a parsed tree and parsing it again gives the same tree', () => {
    fc.assert(
      fc.property(tree, (t) => {
        const text = printClaimName(t);
        let parsed: ClaimNameTree;
        try {
          parsed = parseClaimName(text);
        } catch (err) {
          // Generated trees may exceed the limits; that must be our typed error and nothing else.
          return err instanceof ClaimSyntaxError;
        }
        expect(parsed).toEqual(t);
        expect(printClaimName(parsed)).toBe(text);
        return true;
      }),
      { numRuns: 500 },
    );
  });

  it('any string either parses within the limits or fails with ClaimSyntaxError', () => {
    const chars = fc.constantFrom(...'svcerauth.[],abcl23_-X ');
    const names = fc.oneof(
      fc.string({ unit: chars, maxLength: 60 }).map((s) => `svc.ver.${s}`),
      fc.string({ unit: chars, maxLength: 60 }),
      fc.string({ maxLength: 40 }),
    );
    fc.assert(
      fc.property(names, (name) => {
        try {
          const expansions = expandClaimName(name);
          expect(expansions.length).toBeGreaterThan(0);
          expect(expansions.length).toBeLessThanOrEqual(CLAIM_SYNTAX_LIMITS.maxExpansions);
          for (const e of expansions) expect(e).toMatch(/^svc\.(ver|auth)(\.[a-z0-9_-]+)+$/);
        } catch (err) {
          if (!(err instanceof ClaimSyntaxError)) throw err;
          expect(err.offset).toBeGreaterThanOrEqual(0);
          expect(err.offset).toBeLessThanOrEqual(Math.max(name.length, CLAIM_SYNTAX_LIMITS.maxLength));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
