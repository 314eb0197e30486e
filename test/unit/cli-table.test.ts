import { describe, expect, it } from '@jest/globals';

import { table } from '../../lib/cli/management-api.js';
import { terminalText } from '../../lib/terminal-text.js';

describe('what the CLI prints of client metadata cannot talk to the terminal', () => {
  const hostile = 'evil\u001b[31mRED\u001b]52;c;ZWNobyBwd25lZA==\u0007\u001b[2K\rlegit-client\nFAKE-ID  Fake  web\u009b2J\u202eeman\u2028x';

  it('shows control characters, C1, line separators and bidi overrides as \\uXXXX', () => {
    const shown = terminalText(hostile);
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    expect(shown).toBe(
      'evil\\u001b[31mRED\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u001b[2K\\u000dlegit-client\\u000aFAKE-ID  Fake  web\\u009b2J\\u202eeman\\u2028x',
    );
    expect(terminalText('Ärzte-Portal — 診療')).toBe('Ärzte-Portal — 診療');
    expect(terminalText('a\u200eb\u200fc\u061cd\u2069e\u0085f')).toBe('a\\u200eb\\u200fc\\u061cd\\u2069e\\u0085f');
  });

  it('prints one line per row, whatever a client named itself', () => {
    let out = '';
    table({ out: (text: string) => void (out += text), err: () => undefined, env: {} }, ['CLIENT_ID', 'NAME'], [['abc', hostile], ['def', 'plain']]);
    expect(out.split('\n').filter(Boolean)).toHaveLength(3);
    expect(out).not.toContain('\u001b');
    expect(out).not.toContain('\r');
  });

  it('honest: prints as many rows as --all gathers (up to 1000 pages of 500), aligned: 200 000 clients are no "Maximum call stack size exceeded"', () => {
    const chunks: string[] = [];
    const rows = Array.from({ length: 200_000 }, (_, i) => [`client-${i}`, 'enabled']);
    table({ out: (text: string) => void chunks.push(text), env: {} }, ['CLIENT_ID', 'STATE'], rows);
    const lines = chunks.join('').split('\n');
    expect([lines.length, lines[0], lines[200_000]]).toEqual([200_002, 'CLIENT_ID      STATE', 'client-199999  enabled']);
  });
});
