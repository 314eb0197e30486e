import { describe, expect, it } from '@jest/globals';

import { parseProperties } from '../../lib/settings/properties-file.js';

describe('parseProperties', () => {
  it('reads =, : and whitespace separators, comments and blank lines', () => {
    const parsed = parseProperties('# c\n! c\n\na=1\nb: 2\nc 3\n  d = four  \n');
    expect(Object.fromEntries(parsed)).toEqual({ a: '1', b: '2', c: '3', d: 'four  ' });
  });

  it('joins continuation lines and decodes escapes', () => {
    const parsed = parseProperties('list = one,\\\n    two\nkey\\ with\\ space = tab\\there\nu=\\u00e9\n');
    expect(Object.fromEntries(parsed)).toEqual({ list: 'one,two', 'key with space': 'tab\there', u: 'é' });
  });

  it('refuses a key given two values, naming its lines; the same value again is read once', () => {
    expect(() => parseProperties('a=1\nb=0\na=2\n')).toThrow('a is given two values, on lines 1 and 3');
    expect(parseProperties('a=1\na = 1\n').get('a')).toBe('1');
  });

  it('reports a malformed \\u escape with its line', () => {
    expect(() => parseProperties('a=1\nb=\\u12\n')).toThrow('line 2: malformed \\u escape');
  });
});
