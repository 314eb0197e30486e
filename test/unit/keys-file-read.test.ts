import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it, jest } from '@jest/globals';

const real = await import('node:fs');
/** A change made to the named file just after the provider first looks at it (stat or open), as a racing writer would. */
let afterLook: { path: string; change: () => void } | undefined;
/** Each path opened, with its flags. */
const opened: Array<[unknown, unknown]> = [];
const looked =
  <A extends [unknown, ...unknown[]], R>(call: (...args: A) => R) =>
  (...args: A): R => {
    if ((call as unknown) === real.openSync) opened.push([args[0], args[1]]);
    const result = call(...args);
    if (afterLook && args[0] === afterLook.path) {
      const { change } = afterLook;
      afterLook = undefined;
      change();
    }
    return result;
  };
jest.unstable_mockModule('node:fs', () => ({
  ...real,
  default: real.default,
  statSync: looked(real.statSync as (...args: [unknown, ...unknown[]]) => unknown),
  lstatSync: looked(real.lstatSync as (...args: [unknown, ...unknown[]]) => unknown),
  openSync: looked(real.openSync),
}));
const { generateSigningKeys, readSigningKeys } = await import('../../lib/provider/keys.js');
const { keysStatus } = await import('../../lib/provider/key-rotation.js');

const dir = real.realpathSync(real.mkdtempSync(join(tmpdir(), 'svc-keys-read-')));
let n = 0;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});

/** A keys file of fresh signing keys, its text followed by `tail`; and their kids. */
async function keysFile(tail = ''): Promise<{ file: string; kids: string[] }> {
  const { keys } = await generateSigningKeys();
  const file = join(dir, `keys-${(n += 1)}.json`);
  real.writeFileSync(file, JSON.stringify({ keys }) + tail, { mode: 0o600 });
  return { file, kids: keys.map((k) => String(k.kid)) };
}

describe('the keys file is read as what it is when opened', () => {
  it('attack: swapped for a pipe just after it was looked at (a link retargeted, a rename), the pipe fed other keys is refused as what it is, unread', async () => {
    const { file } = await keysFile();
    const other = await keysFile();
    const fifo = join(dir, `fifo-${n}`);
    execFileSync('mkfifo', [fifo]);
    afterLook = {
      path: file,
      change: () => {
        real.renameSync(fifo, file);
        children.push(spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', other.file, file], { stdio: 'ignore' }));
      },
    };
    expect(() => readSigningKeys(file)).toThrow(`svc.keys.file: ${file} is not a regular file`);
  });

  it('attack: a name that leads to no regular file (a pipe, /dev/zero; a watchdog device would arm at its opening, a free terminal become the server\'s) is refused unopened; honest: a regular one is opened without waiting on a pipe or taking a terminal, should it be swapped for one meanwhile', async () => {
    const fifo = join(dir, `fifo-${(n += 1)}`);
    execFileSync('mkfifo', [fifo]);
    const zero = join(dir, `zero-${n}`);
    real.symlinkSync('/dev/zero', zero);
    opened.length = 0;
    for (const file of [fifo, zero]) expect(() => readSigningKeys(file)).toThrow(`svc.keys.file: ${file} is not a regular file`);
    expect(opened).toEqual([]);
    const { file } = await keysFile();
    readSigningKeys(file);
    const { O_NONBLOCK, O_NOCTTY } = real.constants;
    expect(opened.map(([path, flags]) => [path, Number(flags) & (O_NONBLOCK | O_NOCTTY)])).toEqual([[file, O_NONBLOCK | O_NOCTTY]]);
  });

  it('attack: a keys file longer than any keys file (valid keys followed by 1 MiB of spaces, a file that says it is empty but never ends: /proc/self/pagemap) is refused after its first MiB, at start and by keys status; honest: keys padded to exactly 1 MiB are read', async () => {
    const { file: padded } = await keysFile();
    real.appendFileSync(padded, ' '.repeat(2 ** 20 + 1 - real.statSync(padded).size));
    const endless = join(dir, `pagemap-${n}`);
    real.symlinkSync('/proc/self/pagemap', endless);
    for (const file of [padded, endless]) {
      expect(() => readSigningKeys(file)).toThrow(`svc.keys.file: ${file} holds more than 1 MiB`);
      await expect(keysStatus(file, { now: 0 })).rejects.toThrow(`the keys file: ${file} holds more than 1 MiB`);
    }
    const { file, kids } = await keysFile();
    real.appendFileSync(file, ' '.repeat(2 ** 20 - real.statSync(file).size));
    expect(readSigningKeys(file).keys.map((k) => k.kid)).toEqual(kids);
  });

  it('honest: a directory, a link loop and a missing file are refused naming the fault, as before', () => {
    const loop = join(dir, `loop-${(n += 1)}`);
    real.symlinkSync(loop, loop);
    expect(() => readSigningKeys(dir)).toThrow(`svc.keys.file: cannot read ${dir}`);
    expect(() => readSigningKeys(loop)).toThrow(`svc.keys.file: cannot read ${loop}`);
    expect(() => readSigningKeys(join(dir, 'missing.json'))).toThrow(`svc.keys.file: cannot read ${join(dir, 'missing.json')}`);
  });
});
