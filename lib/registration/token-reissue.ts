import { randomBytes } from 'node:crypto';

import type { Adapter, AdapterPayload } from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';
import { POLICY_NAMES } from '../../policies/index.js';
import { currentRequest, MODEL_NAMES } from '../seams.js';
import { requestState } from './request-state.js';

/**
 * The store model of the marks the operator's reissue leaves (by `client_id`, without expiry; removed with the client):
 * the generation of the client's registration access tokens. A token is good only while it carries its client's
 * generation (none while the client has no mark), so the one write of a mark ends every earlier token at once.
 */
export const REISSUE_MODEL = 'RegistrationAccessTokenReissue';

const generationOf = (payload: AdapterPayload | undefined | void): unknown => payload?.generation;

/** The generation of the registration access token the current request claimed, if it claimed one. */
function claimedGeneration(): unknown {
  const ctx = currentRequest();
  return generationOf(ctx ? requestState(ctx)?.claims.find((c) => c.model === MODEL_NAMES.registrationAccessToken)?.snapshot : undefined);
}

/**
 * The `RegistrationAccessToken` adapter: `find` answers nothing for a token of another generation than its client's
 * {@link REISSUE_MODEL} mark, and removes it; `upsert` gives a token rotated in a request the generation of the one the
 * request claimed (oidc-provider writes its own members only), so a token rotated from a dead one is dead too.
 */
export function reissuedTokens(inner: Adapter, marks: Adapter): Partial<Adapter> {
  return {
    find: async (id) => {
      const payload = await inner.find(id);
      if (!(await outdated(payload ?? undefined, marks))) return payload;
      await inner.destroy(id);
      return undefined;
    },
    upsert: (id, payload, expiresIn) => {
      const generation = claimedGeneration();
      return inner.upsert(id, generation === undefined ? payload : { ...payload, generation }, expiresIn);
    },
  };
}

/**
 * True when `token` (a registration access token's record) is of another generation than its client's mark names now:
 * dead for good, as generations never come back. A request that claimed such a token was served as the operator issued
 * its client a new one.
 */
export async function outdated(token: AdapterPayload | undefined, marks: Adapter): Promise<boolean> {
  return typeof token?.clientId === 'string' && generationOf(await marks.find(token.clientId)) !== generationOf(token);
}

/**
 * Issues client `clientId` a registration access token, stored as oidc-provider stores one (through the store, which
 * keeps ids only hashed): a new generation in its mark first, which ends every earlier token at once, then the token of
 * that generation. `undefined` when another reissue wrote its mark meanwhile: its token is the one left.
 */
export async function reissueRegistrationAccessToken(store: Pick<SvcStore, 'adapter'>, clientId: string, by: string): Promise<string | undefined> {
  const [marks, tokens] = [store.adapter(REISSUE_MODEL), store.adapter(MODEL_NAMES.registrationAccessToken)];
  const [generation, token, now] = [randomBytes(16).toString('base64url'), randomBytes(32).toString('base64url'), Math.floor(Date.now() / 1000)];
  await marks.upsert(clientId, { generation, reissued_at: now, reissued_by: by });
  await tokens.upsert(token, { jti: token, kind: MODEL_NAMES.registrationAccessToken, iat: now, clientId, policies: [...POLICY_NAMES], generation });
  if (generationOf(await marks.find(clientId)) === generation) return token;
  await tokens.destroy(token);
  return undefined;
}
