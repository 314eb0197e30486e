import { exportJWK, generateKeyPair } from 'jose';

import { ENCRYPTION_ALG_VALUES } from '../../policies/supported-algorithms.js';
import { CliError } from '../errors.js';
import { parseFlags, writeSecretFile, type Command } from './common.js';

const ALGS: readonly string[] = ENCRYPTION_ALG_VALUES;

const usage = `Usage: svc-connect client-keys [--alg ALG] [--redirect-uri URI ...] [--client-name NAME] [--private-out FILE]

Makes a relying party's encryption key pair and a ready registration body that asks for encrypted
ID tokens and UserInfo. ALG is one of ${ALGS.join(', ')} (default RSA-OAEP-256).
With --private-out the private JWK goes to FILE (mode 0600; a file or symbolic link already there is
replaced, never written through) and only the registration body is
printed; otherwise both are printed as {"registration": …, "private_jwk": …}.`;

/** `svc-connect client-keys`. */
export const clientKeysCommand: Command = {
  name: 'client-keys',
  summary: "make a relying party's encryption key pair and a registration body",
  usage,
  async run(argv, io) {
    const { values } = parseFlags(
      argv,
      { alg: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true }, 'client-name': { type: 'string' }, 'private-out': { type: 'string' } },
      usage,
    );
    const alg = values.alg ?? 'RSA-OAEP-256';
    const privateOut = values['private-out'];
    if (!ALGS.includes(alg)) throw new CliError(`--alg: ${alg} is not one of ${ALGS.join(', ')}`, 2);
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg.startsWith('RSA') ? { modulusLength: 2048 } : { crv: 'P-256' }) });
    const kid = `enc-${new Date().toISOString().slice(0, 10)}`;
    const publicJwk = { ...(await exportJWK(publicKey)), use: 'enc', alg, kid };
    const privateJwk = { ...(await exportJWK(privateKey)), use: 'enc', alg, kid };
    const registration = {
      redirect_uris: values['redirect-uri'] ?? ['https://your-app.example/callback'],
      ...(values['client-name'] ? { client_name: values['client-name'] } : {}),
      id_token_encrypted_response_alg: alg,
      userinfo_encrypted_response_alg: alg,
      jwks: { keys: [publicJwk] },
    };
    if (privateOut) {
      writeSecretFile(privateOut, `${JSON.stringify(privateJwk, null, 2)}\n`);
      io.out(`${JSON.stringify(registration, null, 2)}\n`);
    } else io.out(`${JSON.stringify({ registration, private_jwk: privateJwk }, null, 2)}\n`);
  },
};
