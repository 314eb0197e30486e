import { assertClaimType } from './claim-types.js';
import { GRANT_NAMESPACE } from './grant-namespace.js';
import { ClaimModuleError } from '../errors.js';
import { opaqueFailure } from './plugin-failure.js';
import { expandClaimName, isSvcClaimName } from './syntax.js';
import { mergeOffers, type VerifiedClaimsProvider, type VerifiedOffer, type VerifiedRecord } from './verified.js';
import { readVerifiedRecords } from './verified-records.js';

/** A claim module: the source of some claims (C5). */
export interface ClaimModule {
  /** A stable name, used in logs and errors (never a claim value). */
  readonly name: string;
  /** Claim names or patterns: `*` stands for one segment (`svc.ver.*.l2`), a trailing `**` for one or more. */
  readonly provides: readonly string[];
  /** The values `accountId` has of `claims` (concrete names this module provides); leave out those she lacks. */
  resolve(accountId: string, claims: readonly string[]): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Verified data with its verification metadata, for `verified_claims` (Identity Assurance). */
  readonly verified?: VerifiedClaimsProvider;
  /**
   * What a claim it provides holds, in plain words the consent page adds to the claim's line (`svc.ver.idcard.*`:
   * 'first and last name, date of birth and nationality'), by an entry of `provides`: a person consents to what
   * travels, not to a name. At most 200 characters, one line, without a semicolon or a bidi embedding, override or
   * isolate; an exact entry's words win over a pattern's.
   */
  readonly holds?: Readonly<Record<string, string>>;
}

/** Datasets, levels and procedures the service knows (to list concrete names in discovery). */
const SVC_VOCABULARY = {
  datasets: ['mobile', 'email', 'idcard', 'driverslicense'],
  levels: ['l0', 'l2', 'l3'],
  procedures: ['video', 'nfc', 'api'],
} as const;

function patternToRegExp(pattern: string): RegExp {
  const escaped = pattern
    .split('.')
    .map((part) => (part === '*' ? '[a-z0-9_-]+' : part === '**' ? '[a-z0-9_-]+(?:\\.[a-z0-9_-]+)*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('\\.');
  return new RegExp(`^${escaped}$`);
}

function vocabularyNames(): string[] {
  const { datasets, levels, procedures } = SVC_VOCABULARY;
  const stems = ['ver', 'auth'].flatMap((f) => datasets.flatMap((d) => levels.map((l) => `svc.${f}.${d}.${l}`)));
  return stems.flatMap((stem) => [stem, ...procedures.map((p) => `${stem}.${p}`)]);
}

/**
 * A call into `module`, what `read` takes of its answer taken as the JSON it travels as, then as `take` types it;
 * whatever the call, that reading or typing throws (a getter, a `toJSON`, a value of another type) answered as
 * {@link opaqueFailure}.
 */
function askModule<A, T>(module: ClaimModule, timeoutMs: number, call: () => Promise<A> | A, read: (answer: A) => unknown, take: (json: unknown) => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('no answer in time'), { name: 'ClaimModuleTimeout' })), timeoutMs);
  });
  const answer = async (): Promise<T> => take(JSON.parse(JSON.stringify(read(await Promise.race([call(), timeout]))) ?? 'null'));
  return opaqueFailure((thrown) => new ClaimModuleError(module.name, thrown), answer).finally(() => clearTimeout(timer));
}

/** The members `names` that `answer` has of its own. */
function ownMembers(answer: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  if (typeof answer !== 'object' || answer === null) throw new TypeError('a claim module answers an object');
  return Object.fromEntries(names.flatMap((name) => (Object.hasOwn(answer, name) ? [[name, answer[name]]] : [])));
}

/** The JSON of {@link ownMembers}, each claim the specifications type in its type ({@link assertClaimType}). */
function typedMembers(json: unknown): Record<string, unknown> {
  const members = json as Record<string, unknown>;
  for (const [name, value] of Object.entries(members)) if (value !== null) assertClaimType(name, value);
  return members;
}

/**
 * What a module's `holds` words may not hold: controls (C0, DEL, C1), line and paragraph separators, bidi embeddings,
 * overrides and isolates (which would reorder the rest of the consent line: "(required)" and where it travels), and the
 * semicolon that separates the alternatives of a "one of:" line.
 */
// eslint-disable-next-line no-control-regex -- control characters are what is looked for
const NOT_IN_HOLDS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069;]/;

/** The registered claim modules: which module provides a claim, and what is supported overall. */
export class ClaimRegistry {
  private readonly entries: { module: ClaimModule; exact: Set<string>; patterns: RegExp[]; holds: { match: (claim: string) => boolean; words: string; exact: boolean }[] }[];
  private readonly timeoutMs: number;

  /**
   * @param timeoutMs The longest wait for one call into a module (`svc.claims.module-timeout-ms`).
   * @throws TypeError naming the module and the bad entry, at construction.
   */
  constructor(modules: readonly ClaimModule[], timeoutMs = 10_000) {
    this.timeoutMs = timeoutMs;
    this.entries = modules.map((module, i) => {
      if (!module || typeof module.name !== 'string' || !Array.isArray(module.provides) || typeof module.resolve !== 'function') {
        throw new TypeError(`claimModules[${i}] must have a name, a provides array and a resolve function`);
      }
      const exact = new Set<string>();
      const patterns: RegExp[] = [];
      const provides: readonly unknown[] = module.provides;
      for (const entry of provides) {
        if (typeof entry !== 'string') throw new TypeError(`claimModules[${i}] (${module.name}): provides must list claim names (strings)`);
        if (entry.startsWith(GRANT_NAMESPACE)) throw new TypeError(`claimModules[${i}] (${module.name}): provides ${entry}, in the ${GRANT_NAMESPACE} namespace of grant records; name it otherwise`);
        if (entry.includes('*')) patterns.push(patternToRegExp(entry));
        else if (isSvcClaimName(entry) && expandClaimName(entry).length !== 1) {
          throw new TypeError(`claimModules[${i}] (${module.name}): provides ${entry}, which has alternatives; list concrete names`);
        } else exact.add(entry);
      }
      if (module.verified !== undefined && (typeof module.verified.resolve !== 'function' || typeof module.verified.offer !== 'object' || module.verified.offer === null)) {
        throw new TypeError(`claimModules[${i}] (${module.name}): verified must have an offer and a resolve function`);
      }
      const verifies: readonly unknown[] = Array.isArray(module.verified?.offer.claims) ? module.verified.offer.claims : [];
      const reserved = verifies.find((name): name is string => typeof name === 'string' && name.startsWith(GRANT_NAMESPACE));
      if (reserved !== undefined) throw new TypeError(`claimModules[${i}] (${module.name}): verifies ${reserved}, in the ${GRANT_NAMESPACE} namespace of grant records; name it otherwise`);
      if (module.verified?.offer.evidence.includes('electronic_record') && !module.verified.offer.electronicRecords?.length) {
        throw new TypeError(`claimModules[${i}] (${module.name}): an offer with electronic_record evidence must list its record types (electronicRecords)`);
      }
      const holds = Object.entries(module.holds ?? {}).map(([entry, words]) => {
        if (!provides.includes(entry)) throw new TypeError(`claimModules[${i}] (${module.name}): holds names ${entry}, which is not an entry of provides`);
        if (typeof words !== 'string' || words.trim() === '' || words.length > 200 || NOT_IN_HOLDS.test(words)) {
          throw new TypeError(`claimModules[${i}] (${module.name}): holds of ${entry} must be one line of plain words, at most 200 characters, without a semicolon`);
        }
        const pattern = entry.includes('*') ? patternToRegExp(entry) : undefined;
        return { match: (claim: string) => (pattern ? pattern.test(claim) : claim === entry), words: words.trim(), exact: !pattern };
      });
      // An exact entry says more of its claim than a pattern covering it, whatever their order.
      holds.sort((a, b) => Number(b.exact) - Number(a.exact));
      return { module, exact, patterns, holds };
    });
    this.offer = mergeOffers(this.entries.flatMap((e) => (e.module.verified ? [e.module.verified.offer] : [])));
  }

  /** What the modules' verified data can contain; `undefined` when no module provides any. */
  readonly offer: VerifiedOffer | undefined;

  /** Every verification `accountId` holds, from every module that provides verified data. */
  async resolveVerified(accountId: string): Promise<VerifiedRecord[]> {
    const providers = this.entries.flatMap((e) => (e.module.verified ? [{ module: e.module, verified: e.module.verified }] : []));
    const asked = providers.map(async (p) => askModule(p.module, this.timeoutMs, () => p.verified.resolve(accountId), (answer) => answer, readVerifiedRecords));
    return (await Promise.all(asked)).flat();
  }

  /** The module providing a concrete claim name, or `undefined`. */
  providerOf(claim: string): ClaimModule | undefined {
    return this.entries.find((e) => e.exact.has(claim) || e.patterns.some((p) => p.test(claim)))?.module;
  }

  /** What the module providing a concrete claim name says it holds ({@link ClaimModule.holds}), or `undefined`. */
  holdsOf(claim: string): string | undefined {
    const entry = this.entries.find((e) => e.exact.has(claim) || e.patterns.some((p) => p.test(claim)));
    return entry?.holds.find((h) => h.match(claim))?.words;
  }

  /** Concrete names listed in discovery: every exact name, and vocabulary names matching a pattern. */
  supportedNames(): string[] {
    const names = new Set<string>();
    const vocabulary = vocabularyNames();
    for (const e of this.entries) {
      for (const n of e.exact) names.add(n);
      for (const v of vocabulary) if (e.patterns.some((p) => p.test(v))) names.add(v);
    }
    return [...names];
  }

  /** Resolves concrete claim names for an account: one call per module. */
  async resolve(accountId: string, claims: readonly string[]): Promise<Map<string, unknown>> {
    const byModule = new Map<ClaimModule, string[]>();
    for (const claim of new Set(claims)) {
      const module = this.providerOf(claim);
      if (module) byModule.set(module, [...(byModule.get(module) ?? []), claim]);
    }
    const values = new Map<string, unknown>();
    await Promise.all(
      [...byModule].map(async ([module, names]) => {
        // Only the names asked for are read: a member beside them without JSON (a BigInt id, a cycle) fails nothing.
        const result = await askModule(module, this.timeoutMs, () => module.resolve(accountId, names), (answer) => ownMembers(answer, names), typedMembers);
        for (const name of names) {
          // Its own members only: a name such as `constructor` is no claim of an object's prototype.
          const value = Object.hasOwn(result, name) ? result[name] : undefined;
          if (value !== undefined && value !== null) values.set(name, value);
        }
      }),
    );
    return values;
  }
}
