import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;
const outDir = join(root, 'test-output', 'doc-snippets');

/** Names the docs use without defining them, with the type a reader would have at hand. */
const PRELUDE: Record<string, string> = {
  token: 'string',
  oidc: "typeof import('openid-client')",
  config: "import('openid-client').Configuration",
  callbackUrl: 'URL',
  jwk: "import('jose').JWK",
  privateKey: 'CryptoKey',
  svc: "import('svc-connect').SvcConnect",
  myAuthenticator: "import('svc-connect').Authenticator",
  myRoutes: "import('koa').Middleware",
  lookup: "import('./demo-data.js').PersonLookup",
  personModule: "(lookup: import('./demo-data.js').PersonLookup) => import('svc-connect').ClaimModule",
  emailModule: "(lookup: import('./demo-data.js').PersonLookup) => import('svc-connect').ClaimModule",
  users: '{ verify(login: string, password: string): Promise<{ id: string } | undefined>; has(id: string): Promise<boolean> }',
};

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : name.endsWith('.md') ? [path] : [];
  });
}

function snippets(): { source: string; code: string }[] {
  const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
  return files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({ source: `${relative(root, file)}#${i + 1}`, code: m[1] as string })),
  );
}

describe('TypeScript code blocks in README.md and docs/', () => {
  it('compile (strict) against the library and the examples', () => {
    const all = snippets();
    expect(all.length).toBeGreaterThan(10);
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const names: string[] = [];
    all.forEach(({ source, code }, i) => {
      const declared = (name: string): boolean =>
        new RegExp(
          `\\b(const|let|function|interface|type|class)\\s+${name}\\b|\\b(const|let)\\s*\\{[^}]*\\b${name}\\b[^}]*\\}\\s*=|\\bimport\\s+(type\\s+)?(\\{[^}]*\\b${name}\\b[^}]*\\}|${name}\\b|\\*\\s+as\\s+${name}\\b)`,
        ).test(code);
      const prelude = Object.entries(PRELUDE)
        .filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !declared(name))
        .map(([name, type]) => `declare const ${name}: ${type};`)
        .join('\n');
      const file = `snippet-${String(i + 1).padStart(2, '0')}.ts`;
      names.push(file);
      // Relative imports in docs are the example modules' (docs/claim-modules.md quotes them).
      const text = `// ${source}\n${prelude}\n${code}\nexport {};\n`.replaceAll("'./demo-data.js'", "'../../examples/claim-modules/demo-data.js'");
      writeFileSync(join(outDir, file), text);
    });
    writeFileSync(
      join(outDir, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.json',
        compilerOptions: {
          noEmit: true,
          rootDir: '../..',
          baseUrl: '.',
          noUnusedLocals: false,
          paths: { 'svc-connect': ['../../lib/index.ts'] },
        },
        files: names,
      }),
    );
    let output = '';
    try {
      execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', join(outDir, 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(output).toBe('');
  }, 120_000);
});
