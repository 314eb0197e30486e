import { readFileSync } from 'node:fs';

import { describe, expect, it } from '@jest/globals';

import { ARCHITECTURE_DOC, architectureWithLayers, importEdges, layerViolations, partOf, SETTINGS_READERS, settingsReaders } from './layers.js';

describe('the layers of the code (imports point down the layers)', () => {
  it('no import runs back up a layer, and adapters/ and policies/ use only the base and settings of lib/', () => {
    expect(layerViolations()).toEqual([]);
  });

  it('finds the imports as they are written: static, type-only, re-exports and dynamic', () => {
    const edges = importEdges();
    // The CLI loads the server on demand; it is an import all the same.
    expect(edges).toContainEqual({ from: 'lib/cli/serve.ts', to: 'lib/server.ts', typeOnly: false });
    expect(edges).toContainEqual(expect.objectContaining({ from: 'lib/index.ts', to: 'lib/http/create-app.ts' }));
    expect(edges.some((e) => e.typeOnly)).toBe(true);
    // Every module is in a layer (partOf throws for one that is not).
    expect(() => edges.forEach((edge) => [partOf(edge.from), partOf(edge.to)])).not.toThrow();
    expect(edges.length).toBeGreaterThan(300);
  });

  it('refuses what would run back up: an upward import, a type-only one, lib/ importing examples/, a plugin reaching into lib/', () => {
    expect(
      layerViolations([
        { from: 'lib/settings/load.ts', to: 'lib/http/create-app.ts', typeOnly: false },
        { from: 'lib/claims/account.ts', to: 'lib/provider/runtime.ts', typeOnly: true },
        { from: 'lib/cli/serve.ts', to: 'examples/server.ts', typeOnly: false },
        { from: 'adapters/redis.ts', to: 'lib/web/error-response.ts', typeOnly: false },
        { from: 'policies/algorithms.ts', to: 'lib/claims/modules.ts', typeOnly: false },
      ]),
    ).toHaveLength(5);
    // Down the layers, and within one, is fine.
    expect(
      layerViolations([
        { from: 'lib/http/create-app.ts', to: 'lib/provider/runtime.ts', typeOnly: false },
        { from: 'lib/management/router.ts', to: 'lib/registration/initial-access-tokens.ts', typeOnly: false },
        { from: 'adapters/index.ts', to: 'lib/settings/types.ts', typeOnly: true },
      ]),
    ).toEqual([]);
    expect(() => partOf('lib/nowhere/new.ts')).toThrow(/in no layer/);
  });

  it('only the assembly reads Settings: features, the store, the guard and plug-ins get slices', () => {
    expect(settingsReaders()).toEqual(SETTINGS_READERS);
    const written = new Map([
      ['lib/management/guard.ts', "import type { Settings } from '../settings/types.js';"],
      ['adapters/index.ts', "import {\n  createX,\n  type Settings,\n} from '../lib/index.js';"],
      ['lib/claims/account.ts', "import { type LogSettings } from '../observability/pino-logger.js'; // Settings"],
    ]);
    expect(settingsReaders(written)).toEqual(['adapters/index.ts', 'lib/management/guard.ts']);
  });

  it('docs/architecture.md shows the layers as the code has them (npm run docs:layers)', () => {
    const doc = readFileSync(ARCHITECTURE_DOC, 'utf8');
    expect(doc).toBe(architectureWithLayers(doc));
  });
});
