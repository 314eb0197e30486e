import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from '@jest/globals';

import * as api from '../../lib/index.js';
import { buildApiReport, ENTRY, REPORT } from './api-report.js';

describe('the public API (lib/index.ts) and its report (docs/api-report.md)', () => {
  const built = buildApiReport();

  it('docs/api-report.md is the report of the exports as they are (run `npm run api-report` after changing them)', () => {
    expect(built.markdown).toBe(readFileSync(REPORT, 'utf8'));
  });

  it('every export has TSDoc, states its types, and names only types of ours that are exported', () => {
    expect(built.problems).toEqual([]);
  });

  it('the report lists exactly what the module exports at run time (values), and the package points at it', () => {
    const values = built.entries.filter((e) => e.kind === 'function' || e.kind === 'class' || e.kind === 'const').map((e) => e.name).sort();
    expect(Object.keys(api).sort()).toEqual(values);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, { import: string; types: string }> };
    expect(pkg.exports['.']).toEqual({ types: `./dist/${ENTRY.replace(/\.ts$/, '.d.ts')}`, import: `./dist/${ENTRY.replace(/\.ts$/, '.js')}` });
  });

  it('internals stay internal: helpers of tests, the CLI and the routes are not exported', () => {
    const names = new Set(built.entries.map((e) => e.name));
    for (const internal of ['PROPERTY_DEFINITIONS', 'fetchDocument', 'createStaticAuthenticator', 'checkBasicAuth', 'suspendedClients', 'routeOf', 'createMetrics', 'refOf', 'rotateKeys', 'listClients', 'parseClaimName']) {
      expect([internal, names.has(internal)]).toEqual([internal, false]);
    }
  });
});

describe('the report\'s checks catch what they are for', () => {
  const fixture = mkdtempSync(join(tmpdir(), 'svc-api-report-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('an export without TSDoc, an unstated return or const type, and a forgotten type (reference, typeof, heritage) are each reported', () => {
    mkdirSync(join(fixture, 'lib', 'parts'), { recursive: true });
    writeFileSync(
      join(fixture, 'lib', 'index.ts'),
      "export { documented, undocumented, inferred, LIMITS, Shape, Base, Child, renamed as aliased } from './parts/index.js';\nexport type { Options } from './parts/options.js';\n",
    );
    writeFileSync(join(fixture, 'lib', 'parts', 'options.ts'), '/** Options. */\nexport interface Options {\n  /** A hidden type. */\n  hidden: Hidden;\n}\n/** Not exported by the index. */\nexport interface Hidden {\n  x: number;\n}\n');
    writeFileSync(
      join(fixture, 'lib', 'parts', 'index.ts'),
      [
        "import type { Hidden } from './options.js';",
        "export { renamed } from './renamed.js';",
        '/** Documented. */',
        'export function documented(a: number = 1): Hidden { return { x: a }; }',
        'export function undocumented(): void {}',
        '/** Inferred. */',
        'export function inferred() { return 1; }',
        '/** Limits. */',
        'export const LIMITS = [1, 2];',
        '/** Shape. */',
        'export type Shape = typeof SECRET_TABLE;',
        'const SECRET_TABLE = { a: 1 };',
        '/** Base. */',
        'export class Base {}',
        'class Hidden2 {}',
        '/** Child. */',
        'export class Child extends Hidden2 {\n  /** Member. */\n  run() { return 1; }\n  #secret = 1;\n  private internal = 2;\n}',
        '',
      ].join('\n'),
    );
    writeFileSync(join(fixture, 'lib', 'parts', 'renamed.ts'), '/** Renamed. */\nexport const renamed: number = 1;\n');
    const { problems, entries } = buildApiReport({ root: fixture });
    expect(problems.sort()).toEqual(
      [
        'documented (lib/parts/index.ts): names Hidden, which lib/index.ts does not export',
        'undocumented (lib/parts/index.ts): has no TSDoc',
        'inferred (lib/parts/index.ts): states no return type',
        'LIMITS (lib/parts/index.ts): states no type',
        'Shape (lib/parts/index.ts): names SECRET_TABLE, which lib/index.ts does not export',
        'Child (lib/parts/index.ts): names Hidden2, which lib/index.ts does not export',
        'Child (lib/parts/index.ts): method run states no return type',
        'aliased (lib/parts/renamed.ts): exported under another name than its declaration\'s',
        'Options (lib/parts/options.ts): names Hidden, which lib/index.ts does not export',
      ].sort(),
    );
    // Defaults become optional parameters; bodies and private members are not shown.
    expect(entries.find((e) => e.name === 'documented')?.signature).toBe('function documented(a?: number): Hidden;');
    expect(entries.find((e) => e.name === 'Child')?.signature).not.toMatch(/secret|internal|return 1/);
  });
});
