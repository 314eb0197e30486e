/**
 * Did-you-mean for names of ours: tells a mistyped svc-connect variable or property (an error naming
 * the one it resembles) from a variable of someone else that happens to start with `SVC_` (ignored).
 */

/** Edits (insert, delete, substitute, swap two neighbours) between `a` and `b` (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      let best = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (before[j - 2] ?? 0) + 1);
      current.push(best);
    }
    [before, previous] = [previous, current];
  }
  return previous[b.length] ?? 0;
}

/** How names of one kind are compared (see {@link closestResembled}). */
export interface ResemblanceRule {
  /** The common prefix, compared but not counted (`SVC_`, `svc.`). */
  prefix: string;
  /** What separates words (`_` for variables, `.` and `-` for properties). */
  separator: RegExp;
}

/**
 * How far `candidate` is from `known`, letter case ignored and the prefix not counted, or `undefined`
 * when it does not look like it: at most one edit apart when `known` has fewer than 8 characters after
 * the prefix (`SVC_HOST` is no misspelling of `SVC_PORT`), else two, with the words in their own order
 * or both sorted (`SVC_URL_BASE`); or the start of `known`, two words or more, cut short (`SVC_MANAGEMENT_PASS`).
 */
function distance(candidate: string, known: string, rule: ResemblanceRule): number | undefined {
  const prefix = rule.prefix.toLowerCase();
  const [c, k] = [candidate.toLowerCase(), known.toLowerCase()];
  if (!c.startsWith(prefix) || !k.startsWith(prefix)) return undefined;
  const [cRest, kRest] = [c.slice(prefix.length), k.slice(prefix.length)];
  const words = (s: string): string[] => s.split(rule.separator).filter(Boolean);
  const sorted = (s: string): string => words(s).sort().join(' ');
  const edits = Math.min(editDistance(cRest, kRest), editDistance(sorted(cRest), sorted(kRest)));
  if (edits <= (kRest.length < 8 ? 1 : 2)) return edits;
  return words(cRest).length > 1 && kRest.startsWith(cRest) ? kRest.length - cRest.length : undefined;
}

/** The one of `known` that `candidate` looks like, closest first, if any. */
export function closestResembled(candidate: string, known: Iterable<string>, rule: ResemblanceRule): string | undefined {
  let best: { name: string; edits: number } | undefined;
  for (const name of known) {
    const edits = distance(candidate, name, rule);
    if (edits !== undefined && (!best || edits < best.edits)) best = { name, edits };
  }
  return best?.name;
}
