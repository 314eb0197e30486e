import { createHash } from 'node:crypto';

import type { Client, Grant } from 'oidc-provider';

import { GRANT_NAMESPACE } from './grant-namespace.js';
import { channelMode, type Channel } from './privacy.js';
import { isObject, type ChannelClaims } from './request.js';
import { claimsForScope } from './scopes.js';
import { channelRequests, deliveredRequests } from './stored-form.js';
import { verifiedGrantNames, verifiedRequestsOf } from './verified-request.js';

/** How a client's registration delivers user data, per channel (C4). */
export type Delivery = Record<Channel, ReturnType<typeof channelMode>>;

const CHANNELS: readonly Channel[] = ['id_token', 'userinfo'];
// A grant keeps no fields of ours, so the delivery consented to rides among its OIDC claim names,
// under a prefix no claim can have (GRANT_NAMESPACE): `svc:delivery:id_token=encrypted`.
const PREFIX = `${GRANT_NAMESPACE}delivery:`;
const TRAVEL = `${GRANT_NAMESPACE}travel:`;
const NAMED = `${GRANT_NAMESPACE}named:`;
const GROUP = `${GRANT_NAMESPACE}group:`;

/** The grant name that records she approved `name` travelling on `channel` ({@link travelGrantNames}). */
export const travelName = (channel: Channel, name: string): string => `${TRAVEL}${channel}:${name}`;

/** The delivery `client`'s registration has now. */
export function deliveryOf(client: Client): Delivery {
  return { id_token: channelMode(client, 'id_token'), userinfo: channelMode(client, 'userinfo') };
}

/** The delivery as one line (`id_token=encrypted userinfo=withheld`), for a grant or an access token. */
export function deliveryText(delivery: Delivery): string {
  return CHANNELS.map((channel) => `${channel}=${delivery[channel]}`).join(' ');
}

/** Reads {@link deliveryText}; `undefined` for anything else. */
export function parseDelivery(text: unknown): Delivery | undefined {
  if (typeof text !== 'string') return undefined;
  const found = new Map(text.split(' ').map((part) => part.split('=') as [string, string]));
  const modes = CHANNELS.map((channel) => found.get(channel));
  if (!modes.every((m) => m === 'encrypted' || m === 'unencrypted' || m === 'withheld')) return undefined;
  return Object.fromEntries(CHANNELS.map((channel, i) => [channel, modes[i]])) as Delivery;
}

/** The delivery recorded when the person consented; `undefined` for a grant without a record. */
export function recordedDelivery(grant: Grant): Delivery | undefined {
  const names = (grant.openid?.claims ?? []).filter((c) => c.startsWith(PREFIX)).map((c) => c.slice(PREFIX.length));
  return parseDelivery(names.sort().join(' '));
}

/** Records `delivery` on `grant`, replacing an earlier record. */
export function recordDelivery(grant: Grant, delivery: Delivery): void {
  if (grant.openid?.claims) grant.openid.claims = grant.openid.claims.filter((c) => !c.startsWith(PREFIX));
  grant.addOIDCClaims(CHANNELS.map((channel) => `${PREFIX}${channel}=${delivery[channel]}`));
}

/**
 * True when `now` sends more than `consented` covers (or nothing was recorded): it drops an encryption, adds an
 * opt-out, or carries user data on a channel the consent page told her carries none (withheld, then encrypted).
 */
export function weakerThanConsented(now: Delivery, consented: Delivery | undefined): boolean {
  return weakenedChannels(now, consented).length > 0;
}

/** The channels whose delivery `now` is not covered by `consented` ({@link weakerThanConsented}): all without a record. */
function weakenedChannels(now: Delivery, consented: Delivery | undefined): Channel[] {
  // Only what she approved in plain form covers every delivery of its channel.
  return CHANNELS.filter((channel) => !consented || (consented[channel] !== now[channel] && consented[channel] !== 'unencrypted'));
}

/**
 * The claim names of her earlier grant that a grant under the delivery `now` takes over: all but where each claim
 * travels on a channel `now` sends more on than the earlier grant's delivery did. A claim she approved as "not sent",
 * or to be sent encrypted, is asked again before it travels there encrypted, or in plain form.
 */
export function carriedOver(earlier: Grant, now: Delivery): string[] {
  const weakened = weakenedChannels(now, recordedDelivery(earlier)).map((channel) => `${TRAVEL}${channel}:`);
  return earlier.getOIDCClaims().filter((name) => !weakened.some((prefix) => name.startsWith(prefix)));
}

/** What a grant covers: its claim names and its scopes. */
export interface Granted {
  claims: ReadonlySet<string>;
  scopes: ReadonlySet<string>;
}

/** The grant names a grant covers: its claim names, and its scopes (`grant.getOIDCScope()`). */
export function grantedOf(grant: Grant | undefined): Granted {
  return { claims: new Set(grant?.getOIDCClaims() ?? []), scopes: new Set((grant?.getOIDCScope() ?? '').split(' ')) };
}

/**
 * The grant names of where each claim of a request travels, as the consent page shows it
 * (`svc:travel:userinfo:email`): each claim the stored `claims` parameter names (each alternative, each verified
 * claim and detail) in its channel, and each claim of `scope` it does not name in `scopeChannel`; only those
 * `granted` covers (the claims she can be sent: at most two names for each). A grant covers a claim on the
 * channels she approved it on, so a later request cannot move it to the other one (into plaintext UserInfo, say)
 * without asking her, by the `claims` parameter or by leaving it out.
 */
export function travelGrantNames(claims: unknown, scope: string | undefined, scopeChannel: Channel, granted: Granted): string[] {
  const parsed = isObject(claims) ? claims : {};
  const names: string[] = [];
  const named = new Set<string>();
  const add = (channel: Channel, name: string): void => void (granted.claims.has(name) && names.push(travelName(channel, name)));
  for (const channel of CHANNELS) {
    for (const request of channelRequests(parsed[channel] as ChannelClaims | undefined)) {
      named.add(request.requested);
      for (const name of request.alternatives) add(channel, name);
    }
    for (const name of verifiedGrantNames(verifiedRequestsOf(parsed[channel]))) add(channel, name);
  }
  const grantedScope = (scope ?? '').split(' ').filter((s) => granted.scopes.has(s)).join(' ');
  for (const name of claimsForScope(grantedScope)) if (!named.has(name)) names.push(travelName(scopeChannel, name));
  return names;
}

/** Each request of a stored `claims` parameter as delivery sees it ({@link deliveredRequests}), in both channels. */
function deliverableAlternatives(claims: unknown, deliverable: ReadonlySet<string>): { alternatives: string[]; valued: boolean }[] {
  const parsed = isObject(claims) ? claims : {};
  return CHANNELS.flatMap((channel) => deliveredRequests(parsed[channel] as ChannelClaims | undefined, deliverable).map((r) => ({ alternatives: r.alternatives, valued: r.valueMac !== undefined })));
}

/** The grant name of a group she approved, its alternatives in order: a fixed-length digest, so a grant stays small. */
const groupName = ({ alternatives, valued }: { alternatives: readonly string[]; valued: boolean }): string =>
  `${GROUP}${createHash('sha256').update(`${valued ? 'value:' : ''}${alternatives.join(',')}`).digest('base64url').slice(0, 22)}`;

/**
 * The grant names of how she approved each claim of a request, as the consent page showed it: by its own name
 * (`svc:named:svc.ver.email.l2`), or within a group ("one of: …", {@link groupName}: the first she holds is delivered,
 * or with a value the first whose value matches, so a valued group is a group of its own).
 */
export function namingGrantNames(claims: unknown, deliverable: ReadonlySet<string>): string[] {
  return deliverableAlternatives(claims, deliverable).map((request) => (request.alternatives.length === 1 ? `${NAMED}${request.alternatives[0]}` : groupName(request)));
}

/**
 * True when a request asks for a claim she approved neither by name (or through the granted scope) nor within this
 * very group (in this order): approved within a group, a claim named alone, repeated, re-ordered or in another group
 * would let the client receive each of them, or learn which she holds.
 */
export function beyondApprovedGroups(claims: unknown, grant: Granted, deliverable: ReadonlySet<string>): boolean {
  const scopeClaims = new Set(claimsForScope([...grant.scopes].join(' ')));
  const byName = (name: string): boolean => grant.claims.has(`${NAMED}${name}`) || scopeClaims.has(name);
  return deliverableAlternatives(claims, deliverable).some((request) => !grant.claims.has(groupName(request)) && !request.alternatives.every(byName));
}
