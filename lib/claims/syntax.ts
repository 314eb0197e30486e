import { ClaimSyntaxError } from '../errors.js';

// The svc.* claim syntax (C5): `svc.ver.<path>` and `svc.auth.<path>`, where any segment below
// `ver`/`auth`, or a whole sub-path, may be a bracketed, comma-separated, nestable list of alternatives.

/** Limits of the syntax (C5). */
export const CLAIM_SYNTAX_LIMITS = { maxLength: 1024, maxDepth: 8, maxExpansions: 256 } as const;

/** A path: items joined by dots. */
export interface PathNode {
  kind: 'path';
  items: ItemNode[];
}

/** One dot-separated position: a segment or a list of alternative sub-paths. */
export type ItemNode = { kind: 'segment'; value: string } | { kind: 'alternatives'; options: PathNode[] };

/** A parsed svc.* claim name. */
export interface ClaimNameTree {
  family: 'ver' | 'auth';
  path: PathNode;
}

const SEGMENT = /[a-z0-9_-]/;

/** True for names in the svc.* namespace (which must follow this syntax). */
export const isSvcClaimName = (name: string): boolean => name === 'svc' || name.startsWith('svc.');

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {}

  fail(reason: string, offset = this.pos): never {
    throw new ClaimSyntaxError(this.text, offset, reason);
  }

  parse(): ClaimNameTree {
    if (this.text.length > CLAIM_SYNTAX_LIMITS.maxLength) this.fail(`longer than ${CLAIM_SYNTAX_LIMITS.maxLength} characters`, CLAIM_SYNTAX_LIMITS.maxLength);
    const match = /^svc\.(ver|auth)\./.exec(this.text);
    if (!match) this.fail('svc claim names start with svc.ver. or svc.auth.', this.text.startsWith('svc.') ? 4 : 0);
    this.pos = match[0].length;
    const path = this.path(0);
    if (this.pos < this.text.length) this.fail(this.text[this.pos] === ']' ? 'unbalanced ]' : `unexpected ${JSON.stringify(this.text[this.pos])}`);
    return { family: match[1] as 'ver' | 'auth', path };
  }

  private path(depth: number): PathNode {
    const items: ItemNode[] = [this.item(depth)];
    while (this.text[this.pos] === '.') {
      this.pos += 1;
      items.push(this.item(depth));
    }
    return { kind: 'path', items };
  }

  private item(depth: number): ItemNode {
    const c = this.text[this.pos];
    if (c === '[') {
      const open = this.pos;
      if (depth + 1 > CLAIM_SYNTAX_LIMITS.maxDepth) this.fail(`alternatives nested deeper than ${CLAIM_SYNTAX_LIMITS.maxDepth}`);
      this.pos += 1;
      if (this.text[this.pos] === ']') this.fail('empty alternatives []');
      const options = [this.alternative(depth + 1)];
      while (this.text[this.pos] === ',') {
        this.pos += 1;
        options.push(this.alternative(depth + 1));
      }
      if (this.pos >= this.text.length) this.fail('unbalanced [: no closing ]', open);
      if (this.text[this.pos] !== ']') this.fail(`unexpected ${JSON.stringify(this.text[this.pos])} in alternatives`);
      this.pos += 1;
      const next = this.text[this.pos];
      if (next !== undefined && next !== '.' && next !== ',' && next !== ']') this.fail('expected . after ]');
      return { kind: 'alternatives', options };
    }
    const start = this.pos;
    while (this.pos < this.text.length && SEGMENT.test(this.text[this.pos] as string)) this.pos += 1;
    if (this.pos === start) {
      if (this.pos >= this.text.length || c === '.' || c === ',' || c === ']') this.fail('empty segment');
      this.fail(`bad character ${JSON.stringify(c)} (segments are [a-z0-9_-])`);
    }
    const next = this.text[this.pos];
    if (next !== undefined && next !== '.' && next !== ',' && next !== ']') {
      this.fail(next === '[' ? 'expected . before [' : `bad character ${JSON.stringify(next)} (segments are [a-z0-9_-])`);
    }
    return { kind: 'segment', value: this.text.slice(start, this.pos) };
  }

  private alternative(depth: number): PathNode {
    const c = this.text[this.pos];
    if (c === ',' || c === ']') this.fail('empty alternative');
    return this.path(depth);
  }
}

/** The concrete names a tree stands for, counted, saturating at `maxExpansions + 1` so deep products stay cheap. */
export const countClaimNames = (tree: ClaimNameTree): number => countPath(tree.path);

const SATURATED = CLAIM_SYNTAX_LIMITS.maxExpansions + 1;

function countPath(path: PathNode): number {
  let product = 1;
  for (const item of path.items) {
    const options = item.kind === 'segment' ? 1 : item.options.reduce((sum, o) => Math.min(SATURATED, sum + countPath(o)), 0);
    product = Math.min(SATURATED, product * options);
  }
  return product;
}

/**
 * Parses an svc.* claim name and checks its limits (expansions are counted, not materialised).
 * @throws {@link ClaimSyntaxError} with the offset and reason of the first fault.
 */
export function parseClaimName(name: string): ClaimNameTree {
  const tree = new Parser(name).parse();
  if (countClaimNames(tree) > CLAIM_SYNTAX_LIMITS.maxExpansions) {
    throw new ClaimSyntaxError(name, 0, `more than ${CLAIM_SYNTAX_LIMITS.maxExpansions} alternatives`);
  }
  return tree;
}

/** The concrete names a request may materialise (C5, behind counting), shared by all its names. */
export class ExpansionBudget {
  materialized = 0;

  constructor(readonly limit: number) {}

  /** Takes `count` names from the budget. @throws RangeError, taking nothing, when they do not fit. */
  take(count: number): void {
    if (this.materialized + count > this.limit) throw new RangeError(`more than ${this.limit} concrete claim names`);
    this.materialized += count;
  }
}

function expandPath(path: PathNode): string[] {
  let acc = [''];
  for (const item of path.items) {
    const options = item.kind === 'segment' ? [item.value] : item.options.flatMap((o) => expandPath(o));
    const next: string[] = [];
    for (const prefix of acc) for (const option of options) next.push(prefix ? `${prefix}.${option}` : option);
    acc = next;
  }
  return acc;
}

/** The concrete names of a tree, in written order, each taken from `budget` when one is given. */
export function expandClaimTree(tree: ClaimNameTree, budget?: ExpansionBudget): string[] {
  // Taken before any work, so no intermediate list grows beyond what the budget allowed.
  const count = countClaimNames(tree);
  if (count > CLAIM_SYNTAX_LIMITS.maxExpansions) throw new RangeError(`more than ${CLAIM_SYNTAX_LIMITS.maxExpansions} alternatives`);
  budget?.take(count);
  return expandPath(tree.path).map((p) => `svc.${tree.family}.${p}`);
}

/**
 * The concrete claim names a (possibly bracketed) svc.* name stands for, in written order: the
 * leftmost alternative varies slowest. A name without brackets expands to itself.
 * @throws {@link ClaimSyntaxError} for malformed names.
 */
export function expandClaimName(name: string): string[] {
  return expandClaimTree(parseClaimName(name));
}

function printPath(path: PathNode): string {
  return path.items.map((i) => (i.kind === 'segment' ? i.value : `[${i.options.map(printPath).join(',')}]`)).join('.');
}

/** Prints a tree back to its canonical text (`parseClaimName(printClaimName(t))` equals `t`). */
export const printClaimName = (tree: ClaimNameTree): string => `svc.${tree.family}.${printPath(tree.path)}`;

/** True when the name contains alternatives. */
export const hasAlternatives = (name: string): boolean => name.includes('[');
