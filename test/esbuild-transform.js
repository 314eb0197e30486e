/**
 * Jest's TypeScript transform: esbuild strips the types file by file (types are checked by
 * `npm run typecheck`, not here), with a fifth less CPU than ts-jest took on `test/unit`.
 */
/* global URL */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { transformSync, version } from 'esbuild';

const tsconfigRaw = readFileSync(new URL('../tsconfig.json', import.meta.url), 'utf8');

export default {
  process(source, filename) {
    const { code, map } = transformSync(source, { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'external', sourcefile: filename, tsconfigRaw });
    return { code, map };
  },
  getCacheKey(source, filename) {
    return createHash('sha256').update(version).update(tsconfigRaw).update(filename).update('\0').update(source).digest('hex');
  },
};
