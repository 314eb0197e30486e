/**
 * An authenticator for `svc.authenticator.module`: signs in the people of a users file
 * (examples/users-file.ts; `AUTH_USERS_FILE`, default `users.json`) by their scrypt hashes.
 *
 *   SVC_AUTHENTICATOR_MODULE=examples/authenticator-file.ts AUTH_USERS_FILE=/etc/svc-connect/users.json npm start
 *
 * Make a hash for the file (the password is read from standard input, not from the command line):
 *
 *   npx tsx examples/authenticator-file.ts hash
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

import type { Authenticator, ModuleContext } from '../lib/index.js';
import { isMainModule } from '../lib/is-main.js';
import { hashPassword, readUsersFile, sameLogin, usersFilePath, verifyPassword, type FileUser } from './users-file.js';

/**
 * An {@link Authenticator} over `users`: an unknown login costs the same scrypt work as a wrong
 * password (a hash of the strength all users share), so timing does not tell which logins exist.
 */
export async function fileAuthenticator(users: readonly FileUser[]): Promise<Authenticator> {
  const byLogin = new Map(users.map((u) => [sameLogin(u.login), u]));
  const subs = new Set(users.map((u) => u.sub));
  const [, n, r, p] = users[0]?.password.split(':') ?? [];
  const other = users.findIndex((u) => u.password.split(':').slice(1, 4).join(':') !== `${n}:${r}:${p}`);
  if (other > 0) throw new Error(`users 0 and ${other} of the users file have scrypt hashes of different N, r or p; rehash them alike`);
  const decoy = await hashPassword(`decoy ${Math.random()}`, users[0] ? { N: Number(n), r: Number(r), p: Number(p) } : undefined);
  return {
    // `Erika` is not `erika`; a letter composed otherwise (NFD) is the same letter, and `erika ` is `erika`.
    canonicalLogin: sameLogin,
    async authenticate(login, password) {
      const user = byLogin.get(sameLogin(login));
      const ok = await verifyPassword(password, user?.password ?? decoy);
      return user && ok ? user.sub : undefined;
    },
    exists: async (accountId) => subs.has(accountId),
  };
}

/** `svc.authenticator.module`'s default export: the users of `AUTH_USERS_FILE`, read at start. */
export default async function createFileAuthenticator(context: ModuleContext): Promise<Authenticator> {
  const path = usersFilePath();
  const users = readUsersFile(path);
  context.logger.info('users_file_loaded', { file: path, users: users.length });
  return fileAuthenticator(users);
}

if (isMainModule(import.meta.url)) {
  if (process.argv[2] !== 'hash') {
    process.stderr.write('usage: npx tsx examples/authenticator-file.ts hash   (reads the password from standard input)\n');
    process.exit(2);
  }
  // At a terminal, readline edits the line and echoes it to an output that shows nothing: the password stays off the screen.
  const typed = process.stdin.isTTY;
  const rl = createInterface({ input: process.stdin, ...(typed ? { output: new Writable({ write: (_chunk, _encoding, done) => done() }), terminal: true } : { terminal: false }) });
  rl.on('SIGINT', () => process.exit(130));
  process.stderr.write('password: ');
  // The first line, also one without a line end (printf, a secret store): readline emits it as the input closes.
  const line = await new Promise<string | undefined>((resolve) => {
    rl.once('line', resolve);
    rl.once('close', () => resolve(undefined));
  });
  rl.close();
  if (typed) process.stderr.write('\n');
  if (line === undefined) {
    process.stderr.write('no password on standard input\n');
    process.exit(2);
  }
  if (!line) {
    process.stderr.write('the password must not be empty\n');
    process.exit(2);
  }
  process.stdout.write(`${await hashPassword(line)}\n`);
}
