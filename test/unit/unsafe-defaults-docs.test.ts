import { readFileSync } from 'node:fs';

import { describe, expect, it } from '@jest/globals';

import { loadSettings } from '../../lib/settings/load.js';
import { findUnsafeDefaults } from '../../lib/settings/unsafe.js';

const doc = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the docs count the start warnings of a bare npm start as the server does', () => {
  const found = findUnsafeDefaults(loadSettings({ env: {} }), { management: true });

  it('lists each unsafe default in the configuration reference\'s table', () => {
    const table = doc('docs/configuration.md').split('## Unsafe defaults')[1]?.split('\n## ')[0] ?? '';
    const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Default') && !line.startsWith('|---'));
    expect(rows).toHaveLength(found.length);
    for (const { property } of found) expect(rows.some((row) => row.includes(`\`${property}`))).toBe(true);
  });

  it('says the same number wherever a number is given', () => {
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
    expect(doc('docs/logs-and-events.md')).toContain(`warnings=${found.length}\n`);
    expect(doc('docs/logs-and-events.md')).toContain(`store memory, ${found.length} warnings`);
    expect(doc('docs/getting-started.md')).toContain(`(${words[found.length]}: `);
    expect(doc('docs/configuration.md')).toContain(`warns about all ${words[found.length]}`);
    expect(doc('docs/spec-decisions.md')).toContain(`${words[found.length]} warnings on a bare \`npm start\``);
  });
});
