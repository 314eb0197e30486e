import { createHash } from 'node:crypto';

import type { AdapterPayload, Client, Grant } from 'oidc-provider';

import { GRANT_NAMESPACE } from './grant-namespace.js';
import { channelMode, type Channel } from './privacy.js';
import { isObject, type ChannelClaims } from './request.js';
import { claimsForScope } from './scopes.js';
import { channelRequests, deliveredRequests } from './stored-form.js';
import { verifiedGrantNames, verifiedRequestsOf } from './verified-request.js';

/**
 * How a client's registration delivers user data, per channel (C4), and the `sub` it receives: her account id, which
 * every public client receives too, or a pairwise one.
 */
export type Delivery = Record<Channel, ReturnType<typeof channelMode>> & { subject: 'public' | 'pairwise' };

const CHANNELS: readonly Channel[] = ['id_token', 'userinfo'];
// A grant keeps no fields of ours, so the delivery consented to rides among its OIDC claim names,
// under a prefix no claim can have (GRANT_NAMESPACE): `svc:delivery:id_token=encrypted`.
const PREFIX = `${GRANT_NAMESPACE}delivery:`;
const TRAVEL = `${GRANT_NAMESPACE}travel:`;
const NAMED = `${GRANT_NAMESPACE}named:`;
const GROUP = `${GRANT_NAMESPACE}group:`;

/** The grant name that records she approved `name` travelling on `channel` ({@link travelGrantNames}). */
export const travelName = (channel: Channel, name: string): string => `${TRAVEL}${channel}:${name}`;

/** The grant name of a claim she approved by its own name in `channel` ({@link namingGrantNames}): it travels there too. */
const namedName = (channel: Channel, name: string): string => `${NAMED}${channel}:${name}`;

/** The naming record that covers travel record `travel` (`svc:travel:userinfo:email` → `svc:named:userinfo:email`). */
const namedOf = (travel: string): string => `${NAMED}${travel.slice(TRAVEL.length)}`;

/** True when a grant's names (`approved`) cover travel record `travel`: she approved the claim there, by its own name or not. */
export function travelCovered(approved: ReadonlySet<string>, travel: string): boolean {
  return approved.has(travel) || approved.has(namedOf(travel));
}

/** Whether a grant's names (`approved`) cover each scope claim travelling alone in `channel`: she approved it there by its own name. */
export function scopeClaimCovered(approved: ReadonlySet<string>, channel: Channel): (name: string) => boolean {
  return (name) => approved.has(namedName(channel, name));
}

/** The delivery `client`'s registration has now (oidc-provider takes a client without `subject_type` as public). */
export function deliveryOf(client: Client): Delivery {
  return { id_token: channelMode(client, 'id_token'), userinfo: channelMode(client, 'userinfo'), subject: client.subjectType === 'pairwise' ? 'pairwise' : 'public' };
}

/** The delivery as one line (`id_token=encrypted userinfo=withheld subject=pairwise`), for a grant or an access token. */
export function deliveryText(delivery: Delivery): string {
  return [...CHANNELS.map((channel) => `${channel}=${delivery[channel]}`), `subject=${delivery.subject}`].join(' ');
}

/** Reads {@link deliveryText}; `undefined` for anything else. */
export function parseDelivery(text: unknown): Delivery | undefined {
  if (typeof text !== 'string') return undefined;
  const found = new Map(text.split(' ').map((part) => part.split('=') as [string, string]));
  const modes = CHANNELS.map((channel) => found.get(channel));
  if (!modes.every((m) => m === 'encrypted' || m === 'unencrypted' || m === 'withheld')) return undefined;
  const subject = found.get('subject');
  if (subject !== 'public' && subject !== 'pairwise') return undefined;
  return { ...(Object.fromEntries(CHANNELS.map((channel, i) => [channel, modes[i]])) as Record<Channel, ReturnType<typeof channelMode>>), subject };
}

/** The delivery recorded when the person consented, of a grant or its stored payload; `undefined` for a grant without a record. */
export function recordedDelivery(grant: Grant | AdapterPayload): Delivery | undefined {
  const claims = (grant as { openid?: { claims?: unknown } }).openid?.claims;
  const names = (Array.isArray(claims) ? claims : []).filter((c): c is string => typeof c === 'string' && c.startsWith(PREFIX)).map((c) => c.slice(PREFIX.length));
  return parseDelivery(names.sort().join(' '));
}

/** Records `delivery` on `grant`, replacing an earlier record. */
export function recordDelivery(grant: Grant, delivery: Delivery): void {
  if (grant.openid?.claims) grant.openid.claims = grant.openid.claims.filter((c) => !c.startsWith(PREFIX));
  grant.addOIDCClaims(deliveryText(delivery).split(' ').map((part) => `${PREFIX}${part}`));
}

/**
 * True when `now` gives the client her account id where she consented to a pairwise `sub`: one every public client
 * receives, so they could tell it is her.
 */
export function subjectShared(now: Delivery, consented: Delivery | undefined): boolean {
  return now.subject === 'public' && consented?.subject === 'pairwise';
}

/**
 * True when `now` sends more than `consented` covers (or nothing was recorded): it drops an encryption, adds an
 * opt-out, carries user data on a channel the consent page told her carries none (withheld, then encrypted), or
 * gives her account id for a pairwise `sub` ({@link subjectShared}).
 */
export function weakerThanConsented(now: Delivery, consented: Delivery | undefined): boolean {
  return weakenedChannels(now, consented).length > 0 || subjectShared(now, consented);
}

/** The channels whose delivery `now` is not covered by `consented` ({@link weakerThanConsented}): all without a record. */
function weakenedChannels(now: Delivery, consented: Delivery | undefined): Channel[] {
  // Only what she approved in plain form covers every delivery of its channel.
  return CHANNELS.filter((channel) => !consented || (consented[channel] !== now[channel] && consented[channel] !== 'unencrypted'));
}

/**
 * The claim names of her earlier grant that a grant under the delivery `now` takes over: all but where each claim
 * travels, and how she approved it (by name, within a group), on a channel `now` sends more on than the earlier
 * grant's delivery did. A claim she approved as "not sent", or to be sent encrypted, is asked again before it travels
 * there encrypted, or in plain form.
 */
export function carriedOver(earlier: Grant, now: Delivery): string[] {
  const weakened = weakenedChannels(now, recordedDelivery(earlier)).flatMap((channel) => [`${TRAVEL}${channel}:`, `${NAMED}${channel}:`, `${GROUP}${channel}:`]);
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
  const add = (channel: Channel, name: string): void => void (granted.claims.has(name) && names.push(travelName(channel, name)));
  for (const channel of CHANNELS) {
    for (const request of channelRequests(parsed[channel] as ChannelClaims | undefined)) for (const name of request.alternatives) add(channel, name);
    for (const name of verifiedGrantNames(verifiedRequestsOf(parsed[channel]))) add(channel, name);
  }
  for (const name of scopeClaimsAlone(parsed, scope, granted)) names.push(travelName(scopeChannel, name));
  return names;
}

/**
 * True when `granted` covers where each claim of a request travels, with scope claims in `scopeChannel`
 * ({@link travelGrantNames}), and each scope claim the `claims` parameter does not name by its own name there: it
 * travels alone, so one she approved in that channel only within a group ("one of") is asked again.
 */
export function travelConsented(claims: unknown, scope: string | undefined, scopeChannel: Channel, granted: Granted): boolean {
  const alone = scopeClaimsAlone(isObject(claims) ? claims : {}, scope, granted);
  return travelGrantNames(claims, scope, scopeChannel, granted).every((travel) => travelCovered(granted.claims, travel)) && alone.every(scopeClaimCovered(granted.claims, scopeChannel));
}

/** The claims of the granted part of `scope` that the `claims` parameter does not name: they travel, and the page shows them, in the scope channel. */
function scopeClaimsAlone(parsed: Record<string, unknown>, scope: string | undefined, granted: Granted): string[] {
  const named = new Set(CHANNELS.flatMap((channel) => channelRequests(parsed[channel] as ChannelClaims | undefined).map((r) => r.requested)));
  const grantedScope = (scope ?? '').split(' ').filter((s) => granted.scopes.has(s)).join(' ');
  return claimsForScope(grantedScope).filter((name) => !named.has(name));
}

/** One request of a stored `claims` parameter as delivery sees it ({@link deliveredRequests}), with its channel. */
interface ChannelRequest {
  channel: Channel;
  alternatives: string[];
  valued: boolean;
}

/** Each request of a stored `claims` parameter as delivery sees it, in both channels. */
function deliverableAlternatives(claims: unknown, deliverable: ReadonlySet<string>): ChannelRequest[] {
  const parsed = isObject(claims) ? claims : {};
  return CHANNELS.flatMap((channel) => deliveredRequests(parsed[channel] as ChannelClaims | undefined, deliverable).map((r) => ({ channel, alternatives: r.alternatives, valued: r.valueMac !== undefined })));
}

/** The grant name of a group she approved in its channel (`svc:group:userinfo:…`), its alternatives in order: a fixed-length digest, so a grant stays small. */
const groupName = ({ channel, alternatives, valued }: ChannelRequest): string =>
  `${GROUP}${channel}:${createHash('sha256').update(`${valued ? 'value:' : ''}${alternatives.join(',')}`).digest('base64url').slice(0, 22)}`;

/**
 * The grant names of how she approved each claim of a request in each channel, as the consent page showed it: by its
 * own name (`svc:named:userinfo:svc.ver.email.l2`), each claim of `scope` the `claims` parameter does not name too (in
 * `scopeChannel`, as {@link travelGrantNames}), or within a group ("one of: …", {@link groupName}: the first she holds
 * is delivered, or with a value the first whose value matches, so a valued group is a group of its own).
 */
function namingGrantNames(claims: unknown, deliverable: ReadonlySet<string>, scope: string | undefined, scopeChannel: Channel, granted: Granted): string[] {
  return [
    ...deliverableAlternatives(claims, deliverable).map((request) => (request.alternatives.length === 1 ? namedName(request.channel, request.alternatives[0] as string) : groupName(request))),
    ...scopeClaimsAlone(isObject(claims) ? claims : {}, scope, granted).map((name) => namedName(scopeChannel, name)),
  ];
}

/**
 * True when a request asks, in a channel, for a claim she approved there neither by name (or through the scope) nor
 * within this very group (in this order): approved within a group, a claim named alone, repeated, re-ordered or in
 * another group would let the client receive each of them, or learn which she holds; approved by name in the other
 * channel only, it would travel alone where she saw it only as one of a group.
 */
export function beyondApprovedGroups(claims: unknown, grant: Granted, deliverable: ReadonlySet<string>): boolean {
  return deliverableAlternatives(claims, deliverable).some(
    (request) => !grant.claims.has(groupName(request)) && !request.alternatives.every((name) => grant.claims.has(namedName(request.channel, name))),
  );
}

/**
 * The grant names a consent to a request records: how she approved each claim in each channel
 * ({@link namingGrantNames}) and where each travels ({@link travelGrantNames}), but for the claims she approved by
 * name, whose naming record says both.
 */
export function consentGrantNames(claims: unknown, deliverable: ReadonlySet<string>, scope: string | undefined, scopeChannel: Channel, granted: Granted): string[] {
  const naming = namingGrantNames(claims, deliverable, scope, scopeChannel, granted);
  const byName = new Set(naming);
  return [...naming, ...travelGrantNames(claims, scope, scopeChannel, granted).filter((travel) => !byName.has(namedOf(travel)))];
}
