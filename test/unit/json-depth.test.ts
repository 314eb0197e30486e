import { describe, expect, it } from '@jest/globals';

import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../lib/web/json-depth.js';

describe('nestsDeeperThan: the nesting of JSON text, judged without parsing it', () => {
  const nested = (depth: number, inner = ''): string => `${'{"a":'.repeat(depth)}${inner || 'null'}${'}'.repeat(depth)}`;

  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more, objects and arrays alike`, () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included; counts those after a string ends', () => {
    expect(nestsDeeperThan(`{"a":"${'['.repeat(500)}"}`)).toBe(false);
    expect(nestsDeeperThan(`{"a":"\\"${'{'.repeat(500)}\\\\"}`)).toBe(false);
    expect(nestsDeeperThan(`{"a":"\\\\",${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`)).toBe(true);
  });

  it('siblings do not add up: many shallow members are shallow', () => {
    expect(nestsDeeperThan(`[${Array.from({ length: 1000 }, () => '[[1]]').join(',')}]`)).toBe(false);
  });
});
