import { readFileSync } from 'node:fs';

import { describe, expect, it } from '@jest/globals';

import { PROPERTY_DEFINITIONS, ruleDerivedEnv } from '../../lib/settings/definitions.js';
import { REFERENCE_END, REFERENCE_START, renderPropertiesTable } from '../../lib/settings/reference.js';

const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

describe('docs/configuration.md', () => {
  it('holds the table generated from the settings code (run `npm run docs:config` after adding a setting)', () => {
    const start = doc.indexOf(REFERENCE_START) + REFERENCE_START.length;
    const end = doc.indexOf(REFERENCE_END);
    expect(doc.slice(start, end).trim()).toBe(renderPropertiesTable());
  });

  it('documents every property with its environment variables', () => {
    for (const d of PROPERTY_DEFINITIONS) {
      expect(d.doc.length).toBeGreaterThan(10);
      expect(doc).toContain(`\`${d.name}\``);
      expect(doc).toContain(`\`${ruleDerivedEnv(d.name)}\``);
      if (d.env) expect(doc).toContain(`\`${d.env}\``);
    }
  });
});
