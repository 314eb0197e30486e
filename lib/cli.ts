#!/usr/bin/env node
/**
 * The `svc-connect` command line (package.json "bin"; the commands are {@link COMMANDS}).
 * Exit codes: 0 success, 1 the operation failed, 2 the command line was wrong, 141 the reader of the output left
 * (`| head`), as a shell reports for git or coreutils ended by SIGPIPE.
 */
import { clientKeysCommand } from './cli/client-keys.js';
import { clientsCommand } from './cli/clients.js';
import { configCommand } from './cli/config.js';
import { CliError } from './errors.js';
import { HelpWanted, type CliIo, type Command } from './cli/common.js';
import { invitationsCommand } from './cli/invitations.js';
import { inviteCommand } from './cli/invite.js';
import { keysCommand } from './cli/keys.js';
import { printableIo } from './cli/printable.js';
import { registerCommand } from './cli/register.js';
import { serveCommand } from './cli/serve.js';
import { loginsCommand } from './cli/logins.js';
import { subjectsCommand } from './cli/subjects.js';
import { isMainModule } from './is-main.js';

const COMMANDS: Command[] = [serveCommand, configCommand, keysCommand, clientKeysCommand, inviteCommand, registerCommand, clientsCommand, invitationsCommand, subjectsCommand, loginsCommand];

const overview = `Usage: svc-connect <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(12)} ${c.summary}`).join('\n')}

Run "svc-connect <command> --help" for a command's options.`;

/**
 * Runs the command line; returns the exit code. Everything it writes, results and errors alike,
 * passes through {@link printableIo}: no control character or bidi override reaches the terminal.
 */
export async function main(argv: string[], terminal: CliIo): Promise<number> {
  const io = printableIo(terminal);
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(`${overview}\n`);
    return name ? 0 : 2;
  }
  const err = (text: string): void => io.err?.(text);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    err(`svc-connect: unknown command ${name}\n\n${overview}\n`);
    return 2;
  }
  // Only a flag: after `--` it is a SUB, a CLIENT_ID or a LOGIN, and the action runs; after a flag (`--client -h`) it
  // may be that flag's value, which the command's own parser refuses as ambiguous, or its help (`--all -h`: HelpWanted).
  const flags = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  const help = flags.findIndex((arg, i) => (arg === '--help' || arg === '-h') && !/^--?[^-=][^=]*$/.test(flags[i - 1] ?? ''));
  if (help >= 0) {
    io.out(`${command.usage}\n`);
    return 0;
  }
  try {
    await command.run(rest, io);
    return 0;
  } catch (failure) {
    if (failure instanceof HelpWanted) {
      io.out(`${command.usage}\n`);
      return 0;
    }
    err(`svc-connect ${name}: ${failure instanceof Error ? failure.message : String(failure)}\n`);
    return failure instanceof CliError ? failure.exitCode : 1;
  }
}

if (isMainModule(import.meta.url)) {
  // Stops quietly where Node would print an unhandled EPIPE; `serve` keeps serving (its logger drops lines it cannot write).
  const serving = process.argv[2] === 'serve';
  for (const stream of [process.stdout, process.stderr]) stream.on('error', (err: NodeJS.ErrnoException) => void (serving || process.exit(err.code === 'EPIPE' ? 141 : 1)));
  const io: CliIo = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text), env: process.env };
  const code = await main(process.argv.slice(2), io).catch(() => 1);
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
}
