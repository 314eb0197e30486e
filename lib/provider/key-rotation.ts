import { randomBytes } from 'node:crypto';
import { open, realpath, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { JWK } from 'jose';

import { SettingsError } from '../errors.js';
import { fileErrorMessage } from '../user-files.js';
import { RETIRE_AFTER_SECONDS, signingKids, sinceOf, stateOf, type KeyState, type StatefulJwk } from './key-states.js';
import { EC_SIGNING_ALG, rsaBits } from '../../policies/jwk-rules.js';
import { generatePrivateJwk, readKeysJson, validateProviderKeys } from './keys.js';

/** Default seconds `next` keys are published before they sign, so relying parties that cache the JWKS learn them first. */
export const DEFAULT_PUBLISH_SECONDS = 3600;

/** What one `rotate` run did. */
export type RotationStep =
  | { step: 'added'; kids: string[]; promoteAfter: number }
  | { step: 'promoted'; kids: string[]; retiring: string[]; retireAfter: number }
  | { step: 'retired'; kids: string[] }
  | { step: 'waiting'; reason: string; until: number };

/** Options of {@link rotateKeysFile} and {@link keysStatus}. */
export interface RotationOptions {
  /** The time, epoch seconds; default now. */
  now?: number;
  /** Seconds `next` keys are published before they may sign. @default 3600 */
  publishSeconds?: number;
}

/** A fresh key of the same kind as `key`: key type, size or curve, `use`, `alg` and `key_ops`. */
async function sameKind(key: JWK): Promise<JWK> {
  const enc = key.use === 'enc';
  const fresh =
    key.kty === 'RSA'
      ? await generatePrivateJwk(enc ? 'RSA-OAEP-256' : 'RS256', { modulusLength: Math.max(2048, rsaBits(key)) }, key.use)
      : await generatePrivateJwk(enc ? 'ECDH-ES' : (EC_SIGNING_ALG[String(key.crv)] ?? 'ES256'), { crv: String(key.crv) }, key.use);
  return { ...fresh, ...(key.alg ? { alg: key.alg } : {}), ...(key.key_ops ? { key_ops: key.key_ops } : {}) };
}

const inState = (keys: StatefulJwk[], state: KeyState): StatefulJwk[] => keys.filter((k) => stateOf(k) === state);
const kidsOf = (keys: StatefulJwk[]): string[] => keys.map((k) => String(k.kid));
const at = (key: StatefulJwk, state: KeyState, since: number): StatefulJwk => ({ ...key, svc_state: state, svc_since: since });

/**
 * Advances the rotation of a keys file by one safe step (`jwks` is not changed):
 * 1. `next` keys published for `publishSeconds` become `current`; the current ones `retiring`;
 * 2. else `retiring` keys retiring for {@link RETIRE_AFTER_SECONDS} are dropped;
 * 3. else, with neither, a `next` key of the same kind is added for every current key;
 * 4. anything else waits, and says until when.
 * A `next` or `retiring` key without `svc_since` (added by hand) is refused: its time cannot be told.
 * @throws {@link SettingsError} naming such a key.
 */
async function rotateKeys(jwks: { keys: StatefulJwk[] }, options: RotationOptions = {}): Promise<{ keys: StatefulJwk[]; result: RotationStep }> {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const publishSeconds = options.publishSeconds ?? DEFAULT_PUBLISH_SECONDS;
  const keys = jwks.keys;
  // Undated (added by hand), a next key would sign at once and a retiring one be dropped at once.
  const undated = keys.findIndex((k) => stateOf(k) !== 'current' && k.svc_since === undefined);
  if (undated >= 0) {
    const key = keys[undated] as StatefulJwk;
    const state = stateOf(key);
    throw new SettingsError(
      `key #${undated + 1} (${String(key.kid)}) is ${state} without svc_since, so keys rotate cannot tell when it may ${state === 'next' ? 'sign' : 'be dropped'}; add "svc_since": ${now} (now, epoch seconds) and reload every server`,
      ['svc.keys.file'],
    );
  }
  const next = inState(keys, 'next');
  const current = inState(keys, 'current');
  const retiring = inState(keys, 'retiring');
  if (next.length > 0) {
    const ready = Math.max(...next.map(sinceOf)) + publishSeconds;
    if (ready > now) return { keys, result: { step: 'waiting', reason: `the next keys ${kidsOf(next).join(', ')} have not been published for ${publishSeconds} s yet`, until: ready } };
    const promoted = keys.map((k) => (stateOf(k) === 'next' ? at(k, 'current', now) : stateOf(k) === 'current' ? at(k, 'retiring', now) : k));
    return { keys: promoted, result: { step: 'promoted', kids: kidsOf(next), retiring: kidsOf(current), retireAfter: now + RETIRE_AFTER_SECONDS } };
  }
  if (retiring.length > 0) {
    const due = retiring.filter((k) => sinceOf(k) + RETIRE_AFTER_SECONDS <= now);
    if (due.length === 0) {
      const until = Math.min(...retiring.map((k) => sinceOf(k) + RETIRE_AFTER_SECONDS));
      return { keys, result: { step: 'waiting', reason: `the retiring keys ${kidsOf(retiring).join(', ')} may still verify ID tokens they signed`, until } };
    }
    return { keys: keys.filter((k) => !due.includes(k)), result: { step: 'retired', kids: kidsOf(due) } };
  }
  const added = await Promise.all(current.map(async (k) => at(await sameKind(k), 'next', now)));
  return { keys: [...keys, ...added], result: { step: 'added', kids: kidsOf(added), promoteAfter: now + publishSeconds } };
}

/** The keys file as written (rotation members kept), and its keys validated in the provider's order. */
function readKeysFile(file: string): { jwks: { keys: StatefulJwk[] }; ordered: JWK[] } {
  const parsed = readKeysJson(file, 'the keys file');
  const { keys: ordered } = validateProviderKeys(parsed, file);
  return { jwks: parsed as { keys: StatefulJwk[] }, ordered };
}

/**
 * Replaces `target` (named `file` by the operator) with `content` atomically, with the owner, group and mode of the file
 * it replaces: a rotation run by root keeps the keys file readable by the service user the servers run as. The new file
 * is created exclusively beside it (mode 0600 while written), flushed to disk, then renamed over it; removed again when
 * any of that fails, leaving `target` as it was.
 * @throws {@link SettingsError} when the write fails, or when this user may not give the new file that owner and group.
 */
async function replaceKeepingOwner(target: string, file: string, content: string): Promise<void> {
  const { uid, gid, mode } = await stat(target);
  const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  // A new file of its own (never one planted at the name).
  const handle = await open(temporary, 'wx', 0o600).catch((err: unknown) => {
    throw new SettingsError(`the rotated keys: ${fileErrorMessage('write', temporary, err)}`, ['svc.keys.file']);
  });
  try {
    await handle.writeFile(content);
    const made = await handle.stat();
    if (made.uid !== uid || made.gid !== gid) {
      await handle.chown(uid, gid).catch(() => {
        throw new SettingsError(
          `cannot give the rotated keys the owner (uid ${uid}) and group (gid ${gid}) of ${file}, so the servers might not read them; run keys rotate as root or as that user. ${file} is unchanged.`,
          ['svc.keys.file'],
        );
      });
    }
    await handle.chmod(mode & 0o777);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temporary, { force: true });
    throw err instanceof SettingsError ? err : new SettingsError(`the rotated keys: ${fileErrorMessage('write', temporary, err)}`, ['svc.keys.file']);
  }
  await handle.close();
  await rename(temporary, target).catch(async (err: unknown) => {
    await rm(temporary, { force: true });
    throw new SettingsError(`the keys file: ${fileErrorMessage('replace', file, err)}`, ['svc.keys.file']);
  });
  // The rename itself, on disk: a crash after it finds the new file, never none.
  const folder = await open(dirname(target), 'r').catch(() => undefined);
  await folder?.sync().catch(() => undefined);
  await folder?.close();
}

/**
 * Runs one rotation step ({@link rotateKeys}) on the keys file `file`, judging it before and after as a server would,
 * and replaces it atomically with a file of the same owner, group and mode (a new file, flushed to disk and renamed over
 * it, removed again when that fails; refused when this user may not give it that owner and group) holding `FILE.lock`.
 * When `file` is a symbolic link, the file it leads to is rotated (lock and replacement beside it) and the link kept,
 * so every process and host reading that file, through this link or another, sees one rotation. Servers use the new
 * keys once they reload them (SIGHUP or restart).
 *
 * @throws {@link SettingsError} for an unreadable or invalid file, or a rotation already running.
 */
export async function rotateKeysFile(file: string, options: RotationOptions = {}): Promise<RotationStep> {
  // An unreadable file is reported as such, not as a lock that cannot be taken beside it.
  readKeysFile(file);
  const target = await realpath(file).catch((err: unknown) => {
    throw new SettingsError(`the keys file: ${fileErrorMessage('read', file, err)}`, ['svc.keys.file']);
  });
  const lock = `${target}.lock`;
  let handle;
  try {
    handle = await open(lock, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new SettingsError(`another rotation of ${target} is running (${lock} exists; remove it if no rotation is running)`, ['svc.keys.file']);
    throw new SettingsError(`the rotation lock: ${fileErrorMessage('create', lock, err)}`, ['svc.keys.file']);
  }
  try {
    const { jwks } = readKeysFile(target);
    const { keys, result } = await rotateKeys(jwks, options);
    if (result.step === 'waiting') return result;
    const rotated = { ...jwks, keys };
    validateProviderKeys(rotated, `${file} (after rotation)`);
    await replaceKeepingOwner(target, file, `${JSON.stringify(rotated, null, 2)}\n`);
    return result;
  } finally {
    await handle.close();
    await rm(lock, { force: true });
  }
}

/** One key of a keys file as `keys status` shows it. */
export interface KeyStatus {
  kid: string;
  kty: string;
  use: string;
  state: KeyState;
  since: number;
  /** The algs this key signs with once the servers have loaded the file. */
  signs: string[];
}

/** The keys of `file`, their states, and what the next `rotate` run would do at `now`. */
export async function keysStatus(file: string, options: RotationOptions = {}): Promise<{ keys: KeyStatus[]; next: RotationStep }> {
  const { jwks, ordered } = readKeysFile(file);
  const signers = Object.entries(signingKids(ordered));
  const plan = await rotateKeys(jwks, options);
  return {
    keys: jwks.keys.map((k) => ({
      kid: String(k.kid),
      kty: k.kty === 'EC' ? `EC ${String(k.crv)}` : `RSA ${rsaBits(k)}`,
      use: k.use ?? 'sig+enc',
      state: stateOf(k),
      since: sinceOf(k),
      signs: signers.filter(([, kid]) => kid === k.kid).map(([alg]) => alg),
    })),
    next: plan.result,
  };
}
