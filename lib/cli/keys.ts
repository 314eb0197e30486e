import { SettingsError, CliError } from '../errors.js';
import { DEFAULT_PUBLISH_SECONDS, keysStatus, rotateKeysFile, type RotationStep } from '../provider/key-rotation.js';
import { generateProviderKeys } from '../provider/keys.js';
import { parseFlags, usageError, writeSecretFile, type Command } from './common.js';
import { table, when } from './management-api.js';

const usage = `Usage: svc-connect keys generate [--out FILE]
       svc-connect keys rotate --file FILE [--publish-seconds N]
       svc-connect keys status --file FILE

generate: the provider's keys as a private JWKS: signing keys (RSA 2048 for RS256/PS256, EC P-256
for ES256, use "sig") and request-object decryption keys (RSA 2048 for RSA-OAEP*, EC P-256 for
ECDH-ES*, use "enc"). With --out the file is written with mode 0600 (its folder must exist) and its
absolute path printed; point svc.keys.file at it. A file or symbolic link already at FILE is replaced
(a new file renamed over it), never written through.
Without --out the JWKS is printed.

rotate: advances the rotation of the keys file FILE by one safe step (see
docs/operations/key-rotation.md): (1) adds a next key for every current key, signing nothing: a
signing key published in the JWKS, a decryption key held, published once current; (2) once the
next keys have been published for N seconds (default ${DEFAULT_PUBLISH_SECONDS}), promotes them:
they sign, the old keys are retiring (signing keys still published, decryption keys still decrypt);
(3) once retiring for 24 h (the longest ID token lifetime), drops the old keys. Run it again for
each step; it waits (and says until when) while a step is not due. When FILE is a symbolic
link, the file it leads to is rotated and the link kept. After each step, reload every
server process (systemctl reload svc-connect, or kill -HUP <pid> of each svc-connect serve
process, never of npm start; or restart): they read the file again and log keys_reloaded.

status: the keys of FILE, their states, which algs each signs, and what rotate would do next.`;

/** What a rotation step of `file` did, and what to do next. */
function report(file: string, step: RotationStep): string {
  const reload = `Reload every server now (systemctl reload svc-connect, or kill -HUP <pid> of each svc-connect serve process; or restart them): they publish and sign with ${file} as it is after their reload.`;
  if (step.step === 'added') {
    return `added next keys ${step.kids.join(', ')} to ${file}: signing nothing yet; the signing keys among them are published in the JWKS (decryption keys once current).\n${reload}\nThen run "svc-connect keys rotate --file ${file}" again after ${when(step.promoteAfter)} to let them sign.\n`;
  }
  if (step.step === 'promoted') {
    return `promoted ${step.kids.join(', ')}: they sign now; ${step.retiring.join(', ')} are retiring (signing keys still published, so tokens they signed keep verifying; decryption keys still decrypt, unpublished).\n${reload}\nRun "svc-connect keys rotate --file ${file}" again after ${when(step.retireAfter)} to drop the retiring keys.\n`;
  }
  if (step.step === 'retired') return `dropped the retired keys ${step.kids.join(', ')} from ${file}; the rotation is complete.\n${reload}\n`;
  return `nothing to do yet: ${step.reason}; run again after ${when(step.until)}. ${file} is unchanged.\n`;
}

/** `svc-connect keys generate | rotate | status`. */
export const keysCommand: Command = {
  name: 'keys',
  summary: 'generate the provider keys (svc.keys.file), rotate them safely, show their states',
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === 'generate') {
      const { out } = parseFlags(rest, { out: { type: 'string' } }, usage).values;
      const jwks = JSON.stringify(await generateProviderKeys(), null, 2);
      if (out) {
        const written = writeSecretFile(out, `${jwks}\n`);
        io.out(`wrote ${written} (mode 0600); set svc.keys.file=${written}\n`);
      } else io.out(`${jwks}\n`);
      return;
    }
    if (sub !== 'rotate' && sub !== 'status') throw usageError(`unknown keys command ${sub ?? '(none)'}`, usage);
    const values: { file?: string; 'publish-seconds'?: string } =
      sub === 'rotate'
        ? parseFlags(rest, { file: { type: 'string' }, 'publish-seconds': { type: 'string' } }, usage).values
        : parseFlags(rest, { file: { type: 'string' } }, usage).values;
    const { file, 'publish-seconds': publish } = values;
    if (!file) throw usageError('--file is required', usage);
    if (publish !== undefined && !/^\d{1,7}$/.test(publish)) throw new CliError('--publish-seconds: expected a whole number of seconds', 2);
    try {
      if (sub === 'rotate') {
        io.out(report(file, await rotateKeysFile(file, publish === undefined ? {} : { publishSeconds: Number(publish) })));
        return;
      }
      const status = await keysStatus(file);
      table(
        io,
        ['KID', 'TYPE', 'USE', 'STATE', 'SINCE', 'SIGNS'],
        status.keys.map((k) => [k.kid, k.kty, k.use, k.state, k.since ? when(k.since) : '-', k.signs.join(',') || '-']),
      );
      const { next } = status;
      if (next.step === 'waiting') io.out(`next rotate: waits until ${when(next.until)} (${next.reason})\n`);
      else if (next.step === 'added') io.out('next rotate: adds next keys\n');
      else io.out(`next rotate: ${next.step === 'promoted' ? 'promotes' : 'drops'} ${next.kids.join(', ')}\n`);
    } catch (err) {
      if (err instanceof SettingsError) throw new CliError(err.message);
      throw err;
    }
  },
};
