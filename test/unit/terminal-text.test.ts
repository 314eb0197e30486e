import { describe, expect, it } from '@jest/globals';

import { clip } from '../../lib/terminal-text.js';

describe('clip: a long value shortened for a message or a page', () => {
  it('keeps a text of at most max characters as it is, and cuts a longer one after max with …', () => {
    expect(clip('a'.repeat(40), 40)).toBe('a'.repeat(40));
    expect(clip('a'.repeat(41), 40)).toBe(`${'a'.repeat(40)}…`);
  });

  it('attack: a character outside the BMP across the cut is kept whole, so no lone surrogate reaches a log line or a page', () => {
    const clipped = clip(`${'a'.repeat(39)}😀😀`, 40);
    expect(clipped).toBe(`${'a'.repeat(39)}😀…`);
  });

  it('counts code points, not UTF-16 units: max characters outside the BMP are kept whole, one more is cut', () => {
    expect(clip('😀'.repeat(40), 40)).toBe('😀'.repeat(40));
    expect(clip('😀'.repeat(41), 40)).toBe(`${'😀'.repeat(40)}…`);
    expect(clip('', 0)).toBe('');
    expect(clip('a', 0)).toBe('…');
  });

  it('attack: a kid or claim of half a megabyte is cut to its first max characters (read no further than them)', () => {
    const long = `${'é'.repeat(40)}${'x'.repeat(512 * 1024)}`;
    expect(clip(long, 40)).toBe(`${'é'.repeat(40)}…`);
  });
});
