/** Regenerates the property table of docs/configuration.md (`npm run docs:config`). */
import { readFileSync, writeFileSync } from 'node:fs';

import { updateReference } from '../lib/settings/reference.js';

const path = new URL('../docs/configuration.md', import.meta.url);
writeFileSync(path, updateReference(readFileSync(path, 'utf8')));
process.stdout.write('docs/configuration.md updated\n');
