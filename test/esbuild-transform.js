/**
 * Jest's TypeScript transform: esbuild strips the types file by file (types are checked by
 * `npm run typecheck`, not here), with a fifth less CPU than ts-jest took on `test/unit`.
 */
/* global URL */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { transformSync, version } from 'esbuild';

const tsconfigRaw = readFileSync(new URL('../tsconfig.json', import.meta.url), 'utf8');
/** This file: a change to how it transforms must not serve what the old one cached. */
const self = readFileSync(new URL(import.meta.url), 'utf8');

export default {
  process(source, filename) {
    const { code, map } = transformSync(source, { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'external', sourcefile: filename, tsconfigRaw });
    return { code, map };
  },
  // Jest caches the code it runs (instrumented by Jest itself under --coverage) under this key alone: like
  // babel-jest's, it covers the configuration and instrumentation besides the file, esbuild and this transform.
  getCacheKey(source, filename, options) {
    const { configString = '', instrument = false } = options ?? {};
    return createHash('sha256').update(version).update(self).update(tsconfigRaw).update(configString).update('\0').update(instrument ? 'instrument' : '').update('\0').update(filename).update('\0').update(source).digest('hex');
  },
};
