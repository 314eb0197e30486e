import type { DecodedMember } from './budget.js';
import { isObject, NOT_RESOLVED, type ChannelClaims, type ClaimRequest } from './request.js';
import { expandClaimName, hasAlternatives } from './syntax.js';

/*
 * The stored form of one channel of the `claims` parameter (kept by the interaction, the code and the
 * access token); only members we wrote survive:
 * - each requested member, in written order, as `null` or `{"essential": true, "svc_mac": …}` (the keyed
 *   MAC of a requested `value`; a `value` asked for a protocol claim is dropped);
 * - then each deliverable alternative of a bracketed member (in `claims_supported`, not requested by its
 *   own name) as `{"svc_of": [[g, i], …]}`: alternative `i` of bracketed member `g`, both 0-based. A valued
 *   member's MAC rides in its first mark (`[g, 0, mac]`, `1` in the others), in `svc_mac` only when it has
 *   no deliverable alternative. oidc-provider drops bracketed names before delivery: marks rebuild them.
 */
const STORED_MEMBERS = { mac: 'svc_mac', alternativeOf: 'svc_of' } as const;

type Mark = [number, number] | [number, number, string | 1];

function storedSpec(spec: unknown, valueMac: string | undefined): Record<string, unknown> | null {
  if (!isObject(spec)) return null;
  const out: Record<string, unknown> = {};
  if (spec.essential === true) out.essential = true;
  if (valueMac !== undefined) out[STORED_MEMBERS.mac] = valueMac;
  return Object.keys(out).length > 0 ? out : null;
}

function isMarked(spec: unknown): spec is Record<string, Mark[]> {
  return isObject(spec) && Array.isArray(spec[STORED_MEMBERS.alternativeOf]);
}

/** The stored form of a validated channel; `deliverable` is oidc-provider's `claims_supported`. */
export function storedForm(members: readonly DecodedMember[], requests: readonly ClaimRequest[], deliverable: ReadonlySet<string>): ChannelClaims {
  const out: ChannelClaims = {};
  const byName = new Map(requests.map((r) => [r.requested, r]));
  const explicit = new Set(members.map((m) => m.name).filter((name) => !hasAlternatives(name)));
  for (const { name, spec } of members) {
    const request = byName.get(name);
    // Protocol claims have no request: a value asked for one (e.g. `sub`) is dropped, as nothing
    // compares it (and oidc-provider must not see it in clear).
    let valueMac = request?.valueMac;
    if (request && hasAlternatives(name) && request.alternatives.some((a) => deliverable.has(a) && !explicit.has(a))) valueMac = undefined;
    out[name] = storedSpec(spec, valueMac);
  }
  let group = 0;
  for (const request of requests) {
    if (!hasAlternatives(request.requested)) continue;
    let position = 0;
    for (const concrete of request.alternatives) {
      if (!deliverable.has(concrete) || explicit.has(concrete)) continue;
      const marked = out[concrete];
      const target = isMarked(marked) ? marked : (out[concrete] = { [STORED_MEMBERS.alternativeOf]: [] as Mark[] });
      const valueMark: [] | [string | 1] = request.valueMac === undefined ? [] : [position === 0 ? request.valueMac : 1];
      target[STORED_MEMBERS.alternativeOf]?.push([group, position, ...valueMark] as Mark);
      position += 1;
    }
    group += 1;
  }
  return out;
}

type GroupEntry = { request: ClaimRequest; fromName: boolean; marked: [number, string][]; valued: boolean; valueMac?: string };

function readMarks(name: string, marks: unknown[], groups: Map<number, GroupEntry>, out: ClaimRequest[]): void {
  for (const mark of marks) {
    if (!Array.isArray(mark) || !Number.isInteger(mark[0]) || !Number.isInteger(mark[1])) continue;
    const [g, i, value] = mark as [number, number, unknown];
    let entry = groups.get(g);
    if (!entry) {
      entry = { request: { requested: `svc_of:${g}`, alternatives: [], essential: false }, fromName: false, marked: [], valued: false };
      groups.set(g, entry);
      out.push(entry.request);
    }
    entry.marked.push([i, name]);
    if (value !== undefined) entry.valued = true;
    if (typeof value === 'string') entry.valueMac = value;
  }
}

/** Settles the groups once every member is read: alternatives from marks, and the group's MAC. */
function settle(groups: Map<number, GroupEntry>): void {
  for (const entry of groups.values()) {
    const { request } = entry;
    if (!entry.fromName) request.alternatives = entry.marked.sort((a, b) => a[0] - b[0]).map(([, name]) => name);
    // A group that asked for a value but whose MAC did not come through matches nothing ('' never does).
    if (request.valueMac === undefined && entry.valued) request.valueMac = entry.valueMac ?? '';
  }
}

const cache = new WeakMap<object, ClaimRequest[]>();

/**
 * Reads one channel of a stored claims request back into requests, in order, once per object. A
 * group is its bracketed name when present (as stored), else rebuilt from the marks of the concrete
 * names that passed oidc-provider's claim filters (delivery). Unknown shapes are skipped.
 */
export function channelRequests(claims: ChannelClaims | undefined): ClaimRequest[] {
  if (!claims) return [];
  const cached = cache.get(claims);
  if (cached) return cached;
  const out: ClaimRequest[] = [];
  const groups = new Map<number, GroupEntry>();
  let group = 0;
  for (const [name, spec] of Object.entries(claims)) {
    if (NOT_RESOLVED.has(name) || name.startsWith('_')) continue;
    const object = isObject(spec) ? spec : undefined;
    const marks = object?.[STORED_MEMBERS.alternativeOf];
    if (Array.isArray(marks)) {
      readMarks(name, marks, groups, out);
      continue;
    }
    const essential = object?.essential === true;
    const valueMac = typeof object?.[STORED_MEMBERS.mac] === 'string' ? { valueMac: object[STORED_MEMBERS.mac] as string } : {};
    if (!hasAlternatives(name)) {
      out.push({ requested: name, alternatives: [name], essential, ...valueMac });
      continue;
    }
    const g = group++;
    let alternatives: string[];
    try {
      alternatives = expandClaimName(name);
    } catch {
      continue;
    }
    const request: ClaimRequest = { requested: name, alternatives, essential, ...valueMac };
    groups.set(g, { request, fromName: true, marked: [], valued: false });
    out.push(request);
  }
  settle(groups);
  cache.set(claims, out);
  return out;
}

/**
 * A channel's requests as delivery sees them: each group without the alternatives the channel also names on their
 * own (those travel by their name; the group delivers the first of the others she holds), every request with only
 * the alternatives in `deliverable` (`claims_supported`), once each. What the consent page shows and what a grant
 * records of the request.
 */
export function deliveredRequests(claims: ChannelClaims | undefined, deliverable: ReadonlySet<string>): ClaimRequest[] {
  const requests = channelRequests(claims);
  const named = new Set(requests.filter((r) => !hasAlternatives(r.requested)).map((r) => r.requested));
  return requests.map((r) => ({ ...r, alternatives: [...new Set(r.alternatives.filter((a) => deliverable.has(a) && (!hasAlternatives(r.requested) || !named.has(a))))] }));
}
