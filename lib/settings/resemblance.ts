/**
 * When a name "looks like" a known one: a close misspelling or the same words in another order.
 * Used to tell a mistyped svc-connect variable (an error naming the property it resembles) from a
 * variable of someone else that happens to start with `SVC_` (ignored).
 */

/** Edits (insert, delete, substitute, swap two neighbours) between `a` and `b` (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < cols; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The edits a misspelling of `known` may have: 1 when `known` has fewer than 8 characters after its
 * prefix (`SVC_PORT` → 1: `SVC_HOST` is not a misspelling of it), else 2.
 */
export function allowedEdits(knownWithoutPrefix: string): number {
  return knownWithoutPrefix.length < 8 ? 1 : 2;
}

/** Options of {@link resembles}. */
export interface ResemblanceRule {
  /** The common prefix, compared but not counted (`SVC_`, `svc.`). */
  prefix: string;
  /** What separates words (`_` for variables, `.` and `-` for properties). */
  separator: RegExp;
}

/**
 * Whether `candidate` looks like `known`: equal ignoring letter case, at most
 * {@link allowedEdits} edits apart, the same words in another order, or two or more words each
 * naming a different word of `known` (inflection, a 4+ letter abbreviation by prefix, one edit).
 */
export function resembles(candidate: string, known: string, rule: ResemblanceRule): boolean {
  const c = candidate.toLowerCase();
  const k = known.toLowerCase();
  const prefix = rule.prefix.toLowerCase();
  if (!c.startsWith(prefix) || !k.startsWith(prefix)) return false;
  const cRest = c.slice(prefix.length);
  const kRest = k.slice(prefix.length);
  if (editDistance(cRest, kRest) <= allowedEdits(kRest)) return true;
  const words = (s: string): string[] => s.split(rule.separator).filter(Boolean);
  const kWords = words(kRest);
  const cWords = words(cRest);
  if (kWords.length > 1 && [...cWords].sort().join(' ') === [...kWords].sort().join(' ')) return true;
  return cWords.length > 1 && everyWordMatches(cWords, kWords);
}

/** A word without an inflection ending (`required` → `require`, `keys` → `key`). */
const stem = (word: string): string => word.replace(/ed$/, 'e').replace(/([^s])s$/, '$1');

/** Two words that name one thing: equal once stemmed, one a 4+ letter prefix of the other, or one edit apart. */
function sameWord(a: string, b: string): boolean {
  const [x, y] = [stem(a), stem(b)];
  if (x === y) return true;
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  if (short.length >= 4 && long.startsWith(short)) return true;
  return short.length >= 4 && editDistance(x, y) <= 1;
}

/**
 * Whether each of two or more `candidate` words names a different word of `known`, in any order:
 * `SVC_REQUIRE_PAR` for `svc.par.required`, `SVC_MANAGEMENT_PASS` for `svc.management.password`.
 * One generic word alone (`SVC_URL`, `SVC_HOST`) is not enough: such variables belong to others.
 */
function everyWordMatches(candidate: readonly string[], known: readonly string[]): boolean {
  const free = [...known];
  for (const word of candidate) {
    const at = free.findIndex((k) => sameWord(word, k));
    if (at < 0) return false;
    free.splice(at, 1);
  }
  return true;
}

/** The first of `known` that `candidate` {@link resembles}, closest first. */
export function closestResembled(candidate: string, known: Iterable<string>, rule: ResemblanceRule): string | undefined {
  const prefix = rule.prefix.length;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    if (!resembles(candidate, name, rule)) continue;
    const distance = editDistance(candidate.toLowerCase().slice(prefix), name.toLowerCase().slice(prefix));
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best?.name;
}
