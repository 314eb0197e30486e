import { expandClaimName, isSvcClaimName } from './syntax.js';
import { mergeOffers, type VerifiedClaimsProvider, type VerifiedOffer, type VerifiedRecord } from './verified.js';

/**
 * A claim module: the source of some claims (C5). It declares which claim names it provides and
 * resolves their values for an account. Values it does not return are claims the user lacks.
 *
 * Patterns: a `*` stands for exactly one segment (`svc.ver.*.l2`); a trailing `**` for one or more
 * (`svc.ver.idcard.**`).
 */
export interface ClaimModule {
  /** A stable name, used in logs and errors (never a claim value). */
  readonly name: string;
  /** Claim names or patterns this module provides. */
  readonly provides: readonly string[];
  /**
   * Resolves values for `accountId`. `claims` are concrete names this module provides; return the
   * values the user has (objects allowed), and leave out the ones they lack. May be async.
   */
  resolve(accountId: string, claims: readonly string[]): Promise<Record<string, unknown>> | Record<string, unknown>;
  /**
   * Verified data with its verification metadata, requested through `verified_claims`
   * (OpenID Connect for Identity Assurance). Optional.
   */
  readonly verified?: VerifiedClaimsProvider;
}

/** Datasets, levels and procedures the service knows (used to list concrete names in discovery). */
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

/** Concrete svc.* names from the known vocabulary (for patterns in discovery). */
function vocabularyNames(): string[] {
  const names: string[] = [];
  for (const family of ['ver', 'auth']) {
    for (const d of SVC_VOCABULARY.datasets) {
      for (const l of SVC_VOCABULARY.levels) {
        names.push(`svc.${family}.${d}.${l}`);
        for (const p of SVC_VOCABULARY.procedures) names.push(`svc.${family}.${d}.${l}.${p}`);
      }
    }
  }
  return names;
}

/** The registered claim modules: which module provides a claim, and what is supported overall. */
export class ClaimRegistry {
  private readonly entries: { module: ClaimModule; exact: Set<string>; patterns: RegExp[] }[];

  /** @throws TypeError naming the module and the bad entry, at construction. */
  constructor(modules: readonly ClaimModule[]) {
    this.entries = modules.map((module, i) => {
      if (!module || typeof module.name !== 'string' || !Array.isArray(module.provides) || typeof module.resolve !== 'function') {
        throw new TypeError(`claimModules[${i}] must have a name, a provides array and a resolve function`);
      }
      const exact = new Set<string>();
      const patterns: RegExp[] = [];
      const provides: readonly unknown[] = module.provides;
      for (const entry of provides) {
        if (typeof entry !== 'string') throw new TypeError(`claimModules[${i}] (${module.name}): provides must list claim names (strings)`);
        if (entry.includes('*')) patterns.push(patternToRegExp(entry));
        else {
          if (isSvcClaimName(entry)) {
            const expanded = expandClaimName(entry);
            if (expanded.length !== 1) throw new TypeError(`claimModules[${i}] (${module.name}): provides ${entry}, which has alternatives; list concrete names`);
          }
          exact.add(entry);
        }
      }
      if (module.verified !== undefined && (typeof module.verified.resolve !== 'function' || typeof module.verified.offer !== 'object' || module.verified.offer === null)) {
        throw new TypeError(`claimModules[${i}] (${module.name}): verified must have an offer and a resolve function`);
      }
      if (module.verified?.offer.evidence.includes('electronic_record') && !module.verified.offer.electronicRecords?.length) {
        throw new TypeError(`claimModules[${i}] (${module.name}): an offer with electronic_record evidence must list its record types (electronicRecords)`);
      }
      return { module, exact, patterns };
    });
    this.offer = mergeOffers(this.entries.flatMap((e) => (e.module.verified ? [e.module.verified.offer] : [])));
  }

  /** What the modules' verified data can contain; `undefined` when no module provides any. */
  readonly offer: VerifiedOffer | undefined;

  /** Every verification `accountId` holds, from every module that provides verified data. */
  async resolveVerified(accountId: string): Promise<VerifiedRecord[]> {
    const providers = this.entries.flatMap((e) => (e.module.verified ? [e.module.verified] : []));
    return (await Promise.all(providers.map(async (p) => p.resolve(accountId)))).flat();
  }

  /** The module providing a concrete claim name, or `undefined`. */
  providerOf(claim: string): ClaimModule | undefined {
    return this.entries.find((e) => e.exact.has(claim) || e.patterns.some((p) => p.test(claim)))?.module;
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
        const result = await module.resolve(accountId, names);
        for (const name of names) {
          const value = result[name];
          if (value !== undefined && value !== null) values.set(name, value);
        }
      }),
    );
    return values;
  }
}
