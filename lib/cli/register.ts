import { resolve } from 'node:path';

import { PRIVATE_MEMBERS } from '../../policies/jwk-rules.js';
import { CliError } from '../errors.js';
import { readJsonFile } from '../user-files.js';
import { baseUrlFrom, call, expectAnswer, failOnError, parseFlags, usageError, type Command } from './common.js';

/** True when `value` holds, at any depth, a JWK (`kty`) with a private or symmetric member. */
const holdsPrivateKey = (value: unknown): boolean =>
  !!value && typeof value === 'object' && (('kty' in value && PRIVATE_MEMBERS.some((m) => m in value)) || Object.values(value).some(holdsPrivateKey));

const usage = `Usage: svc-connect register [--url BASE_URL] (--body FILE | --redirect-uri URI ...)

Registers a client with an initial access token (from SVC_INITIAL_ACCESS_TOKEN, or --token, which
other users of the machine can read in the process list) and
prints the registration response: client_id, client_secret, registration_access_token and
registration_client_uri. FILE is a JSON registration body (e.g. from svc-connect client-keys);
--redirect-uri registers a minimal client. A body holding a private key (a JWK with "d", say) is
refused before anything is sent. BASE_URL (default SVC_BASE_URL or http://localhost:3000)
is https, or http to localhost or a loopback address only: the token would travel in clear text.`;

/** `svc-connect register`. */
export const registerCommand: Command = {
  name: 'register',
  summary: 'register a client with an initial access token and print it',
  usage,
  async run(argv, io) {
    const { values } = parseFlags(argv, { url: { type: 'string' }, token: { type: 'string' }, body: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true } }, usage);
    const token = values.token ?? io.env.SVC_INITIAL_ACCESS_TOKEN;
    if (!token) throw usageError('an initial access token is required (SVC_INITIAL_ACCESS_TOKEN or --token)', usage);
    let body: unknown;
    if (values.body) {
      body = readJsonFile(values.body, (reason) => new CliError(`--body: ${reason}`, 2), { maxBytes: 2 ** 20, streams: true });
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new CliError(`--body: ${resolve(values.body)} holds no JSON object (the registration body client-keys prints)`, 2);
      const registration = (body as { registration?: unknown }).registration;
      if (registration) body = registration;
      // The provider would refuse it, but only after receiving it: her private key never leaves her machine.
      if (holdsPrivateKey(body)) throw new CliError(`--body: ${values.body} holds a private key; register the public key only (the registration body client-keys prints)`, 2);
    } else if (values['redirect-uri']) body = { redirect_uris: values['redirect-uri'] };
    else throw usageError('give --body FILE or --redirect-uri URI', usage);
    const result = await call(`${baseUrlFrom(values.url, io.env)}/oidc/v1/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    failOnError(result, 'registration');
    expectAnswer(result.body, 'registration', { client_id: 'string', registration_access_token: 'string', registration_client_uri: 'string', client_secret: 'string?' });
    io.out(`${JSON.stringify(result.body, null, 2)}\n`);
  },
};
