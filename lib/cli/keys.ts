import { generateSigningKeys } from '../provider/keys.js';
import { CliError, flags, writeSecretFile, type Command } from './common.js';

const usage = `Usage: svc-connect keys generate [--out FILE]

Generates the provider's signing keys (RSA 2048 for RS256/PS256, EC P-256 for ES256) as a private
JWKS. With --out the file is written with mode 0600; point svc.keys.file at it. Without --out the
JWKS is printed.`;

/** `svc-connect keys generate`. */
export const keysCommand: Command = {
  name: 'keys',
  summary: 'generate the provider signing keys (a private JWKS file for svc.keys.file)',
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub !== 'generate') throw new CliError(`unknown keys command ${sub ?? '(none)'}\n\n${usage}`, 2);
    const out = flags(rest, { out: { type: 'string' } }, usage).out as string | undefined;
    const jwks = JSON.stringify(await generateSigningKeys(), null, 2);
    if (out) {
      writeSecretFile(out, `${jwks}\n`);
      io.out(`wrote ${out} (mode 0600); set svc.keys.file=${out}\n`);
    } else io.out(`${jwks}\n`);
  },
};
