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
});
