/**
 * The layers of the code and the imports between them, read from the source: what
 * `test/docs/layers.test.ts` checks (no import runs back up a layer) and what `npm run docs:layers`
 * draws into docs/architecture.md (a Mermaid picture of the folders and their imports).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;

/** One layer: the folders and files it holds (repository paths), lowest layer first. */
export interface Layer {
  name: string;
  parts: string[];
}

/**
 * The layers, lowest first. A module may import its own layer and the layers below, never one
 * above. `adapters/` and `policies/` may import only the base and settings layers of `lib/`.
 */
export const LAYERS: Layer[] = [
  { name: 'base', parts: ['lib/errors.ts', 'lib/user-files.ts', 'lib/email-address.ts', 'lib/logger.ts', 'lib/is-main.ts', 'lib/seams.ts', 'lib/terminal-text.ts', 'lib/net'] },
  { name: 'settings', parts: ['lib/settings'] },
  { name: 'web', parts: ['lib/web'] },
  { name: 'pages', parts: ['lib/pages'] },
  { name: 'observability', parts: ['lib/observability'] },
  { name: 'store, policies, claims', parts: ['adapters', 'policies', 'lib/claims'] },
  { name: 'features', parts: ['lib/registration', 'lib/interactions', 'lib/management', 'lib/demo'] },
  { name: 'provider', parts: ['lib/provider'] },
  { name: 'http', parts: ['lib/http'] },
  { name: 'entry points', parts: ['lib/server.ts', 'lib/cli', 'lib/cli.ts', 'lib/index.ts'] },
  { name: 'examples', parts: ['examples'] },
];

/** Layers `adapters/` and `policies/` may import from `lib/`. */
const PLUGIN_LAYERS = new Set(['base', 'settings']);

/**
 * The assembly: the only modules that read {@link Settings}; they cut it into the narrow slices each
 * feature, the store, the management guard and the plug-in modules receive. The public index
 * re-exports the type and the embedding example is an embedder's code.
 */
export const SETTINGS_READERS = [
  'examples/embed-koa.ts',
  'lib/cli/config.ts',
  'lib/http/create-app.ts',
  'lib/index.ts',
  'lib/provider/configuration.ts',
  'lib/provider/create-provider.ts',
  'lib/provider/runtime.ts',
  'lib/server.ts',
];

/** The modules outside lib/settings/ that import the `Settings` type or the loader (of the source, or of `sources`). */
export function settingsReaders(sources: Map<string, string> = sourceTexts()): string[] {
  const reads = /\b(?:import|export)\s+(?:type\s+)?\{[^}]*\b(?:Settings|loadSettings\w*)\b[^}]*\}\s*from/;
  return [...sources].filter(([file, text]) => !file.startsWith('lib/settings/') && reads.test(text)).map(([file]) => file).sort();
}

function sourceTexts(): Map<string, string> {
  return new Map(['lib', 'adapters', 'policies', 'examples'].flatMap(sourceFiles).map((file) => [file, readFileSync(join(root, file), 'utf8')]));
}

/** One import of one module by another (repository paths of the .ts files). */
export interface ImportEdge {
  from: string;
  to: string;
  /** `import type` / `export type`: erased at runtime, still a dependency of the design. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)(\s+type)?\b[^'";]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Every relative import between the modules of lib/, adapters/, policies/ and examples/. */
export function importEdges(): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const [file, text] of sourceTexts()) {
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[2] ?? match[3];
      if (!spec) continue;
      const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
      edges.push({ from: file, to: target, typeOnly: !!match[1] });
    }
  }
  return edges;
}

/** The part (folder or file of {@link LAYERS}) a module belongs to. */
export function partOf(file: string): string {
  for (const layer of LAYERS) {
    for (const part of layer.parts) if (file === part || file.startsWith(`${part}/`)) return part;
  }
  throw new Error(`${file} is in no layer: add its folder to LAYERS in test/docs/layers.ts`);
}

/** The index in {@link LAYERS} of a module's layer. */
export function layerOf(file: string): number {
  const part = partOf(file);
  return LAYERS.findIndex((layer) => layer.parts.includes(part));
}

/** Imports that break the layering: upward, or from a plugin folder into lib/ beyond base and settings. */
export function layerViolations(edges: ImportEdge[] = importEdges()): string[] {
  const out: string[] = [];
  for (const edge of edges) {
    const [from, to] = [layerOf(edge.from), layerOf(edge.to)];
    const fromPart = partOf(edge.from);
    if (to > from) out.push(`${edge.from} → ${edge.to} (${LAYERS[from]?.name} imports ${LAYERS[to]?.name})`);
    else if ((fromPart === 'adapters' || fromPart === 'policies') && edge.to.startsWith('lib/') && !PLUGIN_LAYERS.has(LAYERS[to]?.name ?? '')) {
      out.push(`${edge.from} → ${edge.to} (${fromPart}/ may import only the base and settings layers of lib/)`);
    }
  }
  return out;
}

const nodeId = (part: string): string => part.replace(/[^a-z0-9]/gi, '_');
const label = (part: string): string => part.replace(/^lib\//, '');

/** The Mermaid picture of the layers: each folder a box, each folder-to-folder import an arrow. */
export function renderLayers(edges: ImportEdge[] = importEdges()): string {
  const lines = ['```mermaid', 'flowchart BT'];
  LAYERS.forEach((layer, i) => {
    lines.push(`  subgraph L${i}["${i}. ${layer.name}"]`);
    for (const part of layer.parts) lines.push(`    ${nodeId(part)}["${label(part)}"]`);
    lines.push('  end');
  });
  const counts = new Map<string, number>();
  for (const edge of edges) {
    const [a, b] = [partOf(edge.from), partOf(edge.to)];
    if (a !== b) counts.set(`${a} ${b}`, (counts.get(`${a} ${b}`) ?? 0) + 1);
  }
  for (const key of [...counts.keys()].sort()) {
    const [a = '', b = ''] = key.split(' ');
    lines.push(`  ${nodeId(a)} --> ${nodeId(b)}`);
  }
  lines.push('```');
  return lines.join('\n');
}

const BEGIN = '<!-- layers:begin (npm run docs:layers) -->';
const END = '<!-- layers:end -->';

/** docs/architecture.md with its layers picture redrawn from the code. */
export function architectureWithLayers(current: string): string {
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/architecture.md needs the markers ${BEGIN} … ${END}`);
  return `${current.slice(0, start + BEGIN.length)}\n${renderLayers()}\n${current.slice(end)}`;
}

/** Path of docs/architecture.md. */
export const ARCHITECTURE_DOC = join(root, 'docs', 'architecture.md');

if (process.argv[1] && relative(process.argv[1], new URL(import.meta.url).pathname) === '') {
  writeFileSync(ARCHITECTURE_DOC, architectureWithLayers(readFileSync(ARCHITECTURE_DOC, 'utf8')));
  const violations = layerViolations();
  process.stdout.write(violations.length ? `${violations.join('\n')}\n` : 'docs/architecture.md: layers redrawn; no import runs back up\n');
}
