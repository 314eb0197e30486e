/**
 * Writes every ```ts block of README.md and docs/ as a file under test-output/doc-snippets/, with a
 * tsconfig that type-checks them together with the whole project (`npm run typecheck`, one `tsc`
 * run): the docs' code compiles (strict) against the library and the examples.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const outDir = join(root, 'test-output', 'doc-snippets');

/** Names the docs use without defining them, with the type a reader would have at hand. */
const PRELUDE: Record<string, string> = {
  token: 'string',
  oidc: "typeof import('openid-client')",
  config: "import('openid-client').Configuration",
  callbackUrl: 'URL',
  tokens: "import('openid-client').TokenEndpointResponse",
  jwk: "import('jose').JWK",
  privateKey: 'CryptoKey',
  signing: 'CryptoKeyPair',
  svc: "import('svc-connect').SvcConnect",
  lookup: "import('svc-connect/examples').PersonLookup",
  personModule: "(lookup: import('svc-connect/examples').PersonLookup) => import('svc-connect').ClaimModule",
  emailModule: "(lookup: import('svc-connect/examples').PersonLookup) => import('svc-connect').ClaimModule",
  users: '{ verify(login: string, password: string): Promise<{ id: string } | undefined>; has(id: string): Promise<boolean> }',
};

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : name.endsWith('.md') ? [path] : [];
  });
}

function snippets(): { source: string; code: string }[] {
  // docs/api-report.md holds declarations (signatures without bodies), not code to run: it is
  // checked against the source by test/docs/api-report.test.ts instead.
  const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs')).filter((file) => relative(root, file) !== 'docs/api-report.md')];
  return files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({ source: `${relative(root, file)}#${i + 1}`, code: m[1] as string })),
  );
}

const all = snippets();
if (all.length < 10) throw new Error(`only ${all.length} TypeScript blocks found in README.md and docs/: is the extraction broken?`);
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
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
  const text = `// ${source}\n${prelude}\n${code}\nexport {};\n`;
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
      paths: { 'svc-connect': ['../../lib/index.ts'], 'svc-connect/examples': ['../../examples/index.ts'] },
    },
    include: ['../../lib', '../../adapters', '../../policies', '../../examples', '../../test', './*.ts'],
    exclude: ['../../node_modules', '../../dist'],
  }),
);
console.log(`${all.length} TypeScript blocks of README.md and docs/ written to ${relative(root, outDir)}`);
