/**
 * The API report of svc-connect: every export of `lib/index.ts` (the package's `svc-connect` entry)
 * with its kind and signature, written to `docs/api-report.md` by `npm run api-report` and compared
 * with that file by `test/docs/api-report.test.ts`.
 *
 * Read from the source with the TypeScript parser only (no type checker, so it takes well under a
 * second): each export is followed through `export … from` to its declaration, printed without
 * bodies, comments or private members. Because nothing is inferred, the rules it checks make the
 * printed signatures complete: every exported function states its return type and every exported
 * `const` its type; every export has TSDoc; and every type of ours that a public signature names is
 * itself exported (an embedder can name what they are handed).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

import ts from 'typescript';

import { PROPERTY_DEFINITIONS } from '../../lib/settings/definitions.js';

const REPOSITORY = resolve(new URL('../..', import.meta.url).pathname);
/** The package's entry point (package.json `exports["."]`, built). */
export const ENTRY = 'lib/index.ts';
/** The committed report. */
export const REPORT = 'docs/api-report.md';

/** The tree being read (the repository; a test points it at a fixture). */
let root = REPOSITORY;

/** One public export, as the report lists it. */
export interface ApiEntry {
  name: string;
  kind: 'class' | 'function' | 'const' | 'interface' | 'type';
  /** Declaring file, relative to the repository. */
  file: string;
  signature: string;
  /** First sentence of its TSDoc. */
  summary: string;
}

let sources = new Map<string, ts.SourceFile>();
function sourceOf(file: string): ts.SourceFile {
  let sf = sources.get(file);
  if (!sf) {
    sf = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
    sources.set(file, sf);
  }
  return sf;
}

/** `./x.js` from `lib/a.ts` → `lib/x.ts` (or `lib/x/index.ts`); undefined for packages. */
function moduleFile(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = join(dirname(from), specifier.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) {
    try {
      readFileSync(join(root, candidate));
      return relative(root, join(root, candidate));
    } catch {
      // try the next spelling
    }
  }
  throw new Error(`${from}: cannot resolve ${specifier}`);
}

type Declaration = ts.ClassDeclaration | ts.FunctionDeclaration | ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.VariableStatement;

/** Where `name` is declared, following `export { name } from`, `export { a as name }` and imports. */
function findDeclaration(file: string, name: string, seen = new Set<string>()): { file: string; node: Declaration; declaredName: string } {
  const key = `${file}#${name}`;
  if (seen.has(key)) throw new Error(`export cycle at ${key}`);
  seen.add(key);
  const sf = sourceOf(file);
  for (const statement of sf.statements) {
    if ((ts.isClassDeclaration(statement) || ts.isFunctionDeclaration(statement) || ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) && statement.name?.text === name) {
      return { file, node: statement, declaredName: name };
    }
    if (ts.isVariableStatement(statement) && statement.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === name)) {
      return { file, node: statement, declaredName: name };
    }
  }
  for (const statement of sf.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) {
        if (element.name.text !== name) continue;
        const original = element.propertyName?.text ?? name;
        const target = statement.moduleSpecifier ? moduleFile(file, (statement.moduleSpecifier as ts.StringLiteral).text) : file;
        if (!target) throw new Error(`${file}: ${name} is re-exported from a package`);
        return findDeclaration(target, original, seen);
      }
    }
    if (ts.isImportDeclaration(statement) && statement.importClause?.namedBindings && ts.isNamedImports(statement.importClause.namedBindings)) {
      for (const element of statement.importClause.namedBindings.elements) {
        if (element.name.text !== name) continue;
        const target = moduleFile(file, (statement.moduleSpecifier as ts.StringLiteral).text);
        if (!target) throw new Error(`${file}: ${name} is imported from a package`);
        return findDeclaration(target, element.propertyName?.text ?? name, seen);
      }
    }
  }
  throw new Error(`${file}: no declaration of ${name}`);
}

/** The names `lib/index.ts` exports. */
function entryExports(): string[] {
  const names: string[] = [];
  for (const statement of sourceOf(ENTRY).statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) names.push(element.name.text);
    } else if (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      throw new Error(`${ENTRY} declares something itself; it only re-exports`);
    }
  }
  return names.sort((a, b) => a.localeCompare(b, 'en'));
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
const isPrivate = (member: ts.ClassElement): boolean =>
  (member.name !== undefined && ts.isPrivateIdentifier(member.name)) ||
  (ts.canHaveModifiers(member) && !!ts.getModifiers(member)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword));

/** The declaration as an embedder sees it: no bodies, no private members, no initializers. */
function stripped(node: Declaration, problems: string[], label: string): ts.Node {
  const f = ts.factory;
  const noExport = (mods: readonly ts.ModifierLike[] | undefined) => mods?.filter((m) => m.kind !== ts.SyntaxKind.ExportKeyword && m.kind !== ts.SyntaxKind.DefaultKeyword && m.kind !== ts.SyntaxKind.AsyncKeyword);
  // A default value is the implementation's: the signature shows the parameter as optional.
  const parameters = (list: ts.NodeArray<ts.ParameterDeclaration>) =>
    list.map((p) => f.updateParameterDeclaration(p, p.modifiers, p.dotDotDotToken, p.name, p.initializer ? f.createToken(ts.SyntaxKind.QuestionToken) : p.questionToken, p.type, undefined));
  if (ts.isFunctionDeclaration(node)) {
    if (!node.type) problems.push(`${label}: states no return type`);
    return f.updateFunctionDeclaration(node, noExport(node.modifiers), undefined, node.name, node.typeParameters, parameters(node.parameters), node.type, undefined);
  }
  if (ts.isVariableStatement(node)) {
    const declarations = node.declarationList.declarations.map((d) => {
      // A constant object `as const` is its own type: printed with its value.
      const asConst = d.initializer && ts.isAsExpression(d.initializer) && ts.isTypeReferenceNode(d.initializer.type) && d.initializer.type.typeName.getText() === 'const';
      if (asConst) return d;
      if (!d.type) problems.push(`${label}: states no type`);
      return f.updateVariableDeclaration(d, d.name, undefined, d.type, undefined);
    });
    return f.updateVariableStatement(node, noExport(node.modifiers), f.updateVariableDeclarationList(node.declarationList, declarations));
  }
  if (ts.isClassDeclaration(node)) {
    const members = node.members.filter((m) => !isPrivate(m) && !ts.isClassStaticBlockDeclaration(m)).map((m) => {
      if (ts.isMethodDeclaration(m)) {
        if (!m.type) problems.push(`${label}: method ${m.name.getText()} states no return type`);
        return f.updateMethodDeclaration(m, m.modifiers?.filter((x) => x.kind !== ts.SyntaxKind.AsyncKeyword), m.asteriskToken, m.name, m.questionToken, m.typeParameters, parameters(m.parameters), m.type, undefined);
      }
      // Parameter properties (`readonly url: string`) are public members: their modifiers stay.
      if (ts.isConstructorDeclaration(m)) return f.updateConstructorDeclaration(m, m.modifiers, parameters(m.parameters), undefined);
      if (ts.isPropertyDeclaration(m)) {
        const value = m.initializer ? constantString(node.getSourceFile(), m.initializer) : undefined;
        const type = m.type ?? (value !== undefined ? f.createLiteralTypeNode(f.createStringLiteral(value, true)) : undefined);
        if (!type) problems.push(`${label}: member ${m.name.getText()} states no type`);
        return f.updatePropertyDeclaration(m, m.modifiers, m.name, m.questionToken, type, undefined);
      }
      if (ts.isGetAccessorDeclaration(m)) return f.updateGetAccessorDeclaration(m, m.modifiers, m.name, m.parameters, m.type, undefined);
      return m;
    });
    return f.updateClassDeclaration(node, noExport(node.modifiers), node.name, node.typeParameters, node.heritageClauses, members);
  }
  // Interfaces and type aliases carry no decorators: their modifiers are plain keywords.
  return f.replaceModifiers(node, (noExport(node.modifiers) ?? []) as ts.Modifier[]);
}

/** The string a member initializer stands for: a literal, or `OBJ.key` of a constant object literal of the file. */
function constantString(sf: ts.SourceFile, initializer: ts.Expression): string | undefined {
  if (ts.isStringLiteral(initializer)) return initializer.text;
  if (!ts.isPropertyAccessExpression(initializer) || !ts.isIdentifier(initializer.expression)) return undefined;
  const object = initializer.expression.text;
  for (const statement of sf.statements) {
    if (ts.isClassDeclaration(statement) && statement.name?.text === object) {
      const member = statement.members.find((m) => ts.isPropertyDeclaration(m) && m.name.getText() === initializer.name.text && ts.getModifiers(m)?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword));
      return member && ts.isPropertyDeclaration(member) && member.initializer && ts.isStringLiteral(member.initializer) ? member.initializer.text : undefined;
    }
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || d.name.text !== object || !d.initializer) continue;
      const literal = ts.isAsExpression(d.initializer) ? d.initializer.expression : d.initializer;
      if (!ts.isObjectLiteralExpression(literal)) return undefined;
      for (const p of literal.properties) {
        if (ts.isPropertyAssignment(p) && p.name.getText() === initializer.name.text && ts.isStringLiteral(p.initializer)) return p.initializer.text;
      }
    }
  }
  return undefined;
}

function kindOf(node: Declaration): ApiEntry['kind'] {
  if (ts.isClassDeclaration(node)) return 'class';
  if (ts.isFunctionDeclaration(node)) return 'function';
  if (ts.isInterfaceDeclaration(node)) return 'interface';
  if (ts.isTypeAliasDeclaration(node)) return 'type';
  return 'const';
}

/** The first sentence of the declaration's TSDoc, or undefined when it has none. */
function summaryOf(node: Declaration): string | undefined {
  const docs = ts.getJSDocCommentsAndTags(ts.isVariableStatement(node) ? (node.declarationList.declarations[0] as ts.Node) : node).filter(ts.isJSDoc);
  const text = docs.map((d) => ts.getTextOfJSDocComment(d.comment) ?? '').join(' ').replace(/\s+/g, ' ').trim();
  if (!text) return undefined;
  const sentence = /^(.*?(?<!\be\.g|\bi\.e)\.)(\s|$)/.exec(text)?.[1] ?? text;
  return sentence.length > 240 ? `${sentence.slice(0, 239)}…` : sentence;
}

/** Types (and `typeof` values) of ours that `node` names: declared in its file or imported from a relative module. */
function ourReferencedTypes(file: string, node: ts.Node): Set<string> {
  const sf = sourceOf(file);
  const local = new Set<string>();
  const imported = new Map<string, string>();
  for (const statement of sf.statements) {
    if ((ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isFunctionDeclaration(statement)) && statement.name) local.add(statement.name.text);
    // Values too: `typeof TABLE` names one.
    if (ts.isVariableStatement(statement)) for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) local.add(d.name.text);
    if (ts.isImportDeclaration(statement) && statement.importClause?.namedBindings && ts.isNamedImports(statement.importClause.namedBindings)) {
      const target = moduleFile(file, (statement.moduleSpecifier as ts.StringLiteral).text);
      if (target) for (const element of statement.importClause.namedBindings.elements) imported.set(element.name.text, element.propertyName?.text ?? element.name.text);
    }
  }
  const typeParameters = new Set<string>();
  const found = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isTypeParameterDeclaration(n)) typeParameters.add(n.name.text);
    if (ts.isTypeReferenceNode(n) || ts.isExpressionWithTypeArguments(n) || ts.isTypeQueryNode(n)) {
      const expression = ts.isTypeReferenceNode(n) ? n.typeName : ts.isTypeQueryNode(n) ? n.exprName : n.expression;
      const first = ts.isIdentifier(expression) ? expression.text : ts.isQualifiedName(expression) ? expression.left.getText() : undefined;
      if (first && !typeParameters.has(first) && (local.has(first) || imported.has(first))) found.add(imported.get(first) ?? first);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

/**
 * Exports that extend a type computed from a table (so no signature can name it): the report lists
 * the members the table gives them instead.
 */
const COMPUTED_BASES: Record<string, { base: string; members: () => string[] } | undefined> = {
  Settings: {
    base: 'Derived',
    members: () => [
      'Derived: one member per row of the property table (types and meaning: docs/configuration.md)',
      ...PROPERTY_DEFINITIONS.map((d) => `  ${d.place}${d.required ? '' : '?'} ← ${d.name}`),
    ],
  },
};

/** Builds the report; `problems` lists every broken rule (missing TSDoc, unstated types, forgotten exports). */
export function buildApiReport(options: { root?: string } = {}): { markdown: string; entries: ApiEntry[]; problems: string[] } {
  root = options.root ?? REPOSITORY;
  sources = new Map();
  const problems: string[] = [];
  const entries: ApiEntry[] = [];
  const names = entryExports();
  const exported = new Set(names);
  for (const name of names) {
    const { file, node, declaredName } = findDeclaration(ENTRY, name);
    const label = `${name} (${file})`;
    if (declaredName !== name) problems.push(`${label}: exported under another name than its declaration's`);
    const bare = stripped(node, problems, label);
    const computed = COMPUTED_BASES[name];
    const printed = printer.printNode(ts.EmitHint.Unspecified, bare, sourceOf(file)).replace(/;\n$/, ';').trim();
    const text = computed ? [printed, ...computed.members().map((line) => `// ${line}`)].join('\n') : printed;
    const summary = summaryOf(node);
    if (!summary) problems.push(`${label}: has no TSDoc`);
    for (const type of ourReferencedTypes(file, bare)) {
      if (!exported.has(type) && type !== name && type !== computed?.base) problems.push(`${label}: names ${type}, which ${ENTRY} does not export`);
    }
    entries.push({ name, kind: kindOf(node), file, signature: text, summary: summary ?? '' });
  }
  const sections: [ApiEntry['kind'], string][] = [['function', 'Functions'], ['class', 'Classes'], ['const', 'Constants'], ['interface', 'Interfaces'], ['type', 'Types']];
  const lines = [
    '# API report',
    '',
    `Every export of \`svc-connect\` (\`${ENTRY}\`), generated by \`npm run api-report\` from the source.`,
    '`test/docs/api-report.test.ts` fails when the exports change and this file was not regenerated,',
    'when an export has no TSDoc, and when a public signature names a type of ours that is not exported.',
    `Nothing else is public; the bundled examples are \`svc-connect/examples\`. ${entries.length} exports.`,
    '',
  ];
  for (const [kind, title] of sections) {
    const group = entries.filter((e) => e.kind === kind);
    if (group.length === 0) continue;
    lines.push(`## ${title}`, '');
    for (const e of group) {
      lines.push(`### \`${e.name}\``, '', `${e.summary} (\`${e.file}\`)`, '', '```ts', e.signature, '```', '');
    }
  }
  return { markdown: `${lines.join('\n').trimEnd()}\n`, entries, problems };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const { markdown, problems } = buildApiReport();
  writeFileSync(join(root, REPORT), markdown);
  console.log(`${REPORT} written`);
  if (problems.length > 0) {
    console.error(problems.map((p) => `  ${p}`).join('\n'));
    process.exitCode = 1;
  }
}
