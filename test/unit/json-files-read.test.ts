import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it, jest } from '@jest/globals';

const real = await import('node:fs');
/** A change made to the named file just after the reader first looks at it, as a racing writer would. */
let afterLook: { path: string; change: () => void } | undefined;
/** Each path opened, with its flags. */
const opened: Array<[unknown, unknown]> = [];
/** The files read as a pipe or a terminal gives them: a byte at a time (a writer that flushes each byte, a line typed). */
const trickled = new Set<unknown>();
const trickling = new Set<number>();
/** The most memory held in array buffers while a trickled file was read. */
let heldMost = 0;
const isFifo = (path: unknown): boolean => typeof path === 'string' && real.statSync(path, { throwIfNoEntry: false })?.isFIFO() === true;
/** A pipe, a device or a /proc file: read whole, it never ends (or waits for a writer for ever). */
const endless = (path: unknown): boolean => {
  const kind = typeof path === 'string' ? real.statSync(path, { throwIfNoEntry: false }) : undefined;
  return !!kind && (kind.isFIFO() || kind.isCharacterDevice() || real.realpathSync(path as string).startsWith('/proc/'));
};
/** A read that would never end fails at once instead: the test fails rather than hangs or fills the memory. */
const wouldHang = (path: unknown): never => {
  throw new Error(`${String(path)} read to an end that never comes`);
};
jest.unstable_mockModule('node:fs', () => ({
  ...real,
  default: real.default,
  statSync: (...args: Parameters<typeof real.statSync>) => {
    const result = real.statSync(...args);
    if (afterLook && args[0] === afterLook.path) {
      const { change } = afterLook;
      afterLook = undefined;
      change();
    }
    return result;
  },
  openSync: (path: Parameters<typeof real.openSync>[0], flags: number, mode?: number) => {
    opened.push([path, flags]);
    if (isFifo(path) && !(flags & real.constants.O_NONBLOCK)) wouldHang(path);
    const fd = real.openSync(path, flags, mode);
    if (trickled.has(path)) trickling.add(fd);
    return fd;
  },
  readSync: (fd: number, buffer: NodeJS.ArrayBufferView, offset: number, length: number, position: null) => {
    if (!trickling.has(fd)) return real.readSync(fd, buffer, offset, length, position);
    heldMost = Math.max(heldMost, process.memoryUsage().arrayBuffers);
    return real.readSync(fd, buffer, offset, Math.min(length, 1), position);
  },
  closeSync: (fd: number) => {
    trickling.delete(fd);
    real.closeSync(fd);
  },
  readFileSync: (...args: Parameters<typeof real.readFileSync>) => (endless(args[0]) ? wouldHang(args[0]) : real.readFileSync(...args)),
}));
const { createMemoryStore, loadSettings, silentLogger } = await import('../../lib/index.js');
const { generateSigningKeys, readSigningKeys } = await import('../../lib/provider/keys.js');
const { resolveRuntime } = await import('../../lib/provider/runtime.js');
const { readUsersFile } = await import('../../examples/users-file.js');
const { readFileBytes } = await import('../../lib/user-files.js');

const dir = real.realpathSync(real.mkdtempSync(join(tmpdir(), 'svc-json-files-')));
let n = 0;
const MiB = 2 ** 20;
const jwks = await generateSigningKeys();

/** One JSON file svc-connect reads: how its errors start, the most it holds, an honest content, and how it is read. */
interface Reader {
  name: string;
  prefix: string;
  maxBytes: number;
  text: string;
  read: (file: string) => Promise<unknown>;
}

const READERS: Reader[] = [
  { name: 'svc.keys.file', prefix: 'svc.keys.file: ', maxBytes: MiB, text: JSON.stringify(jwks), read: async (file) => readSigningKeys(file) },
  {
    name: 'svc.clients.file',
    prefix: 'svc.clients.file: ',
    maxBytes: 4 * MiB,
    text: JSON.stringify([{ client_id: 'rp', client_secret: 'a-client-secret-that-is-long-enough-for-the-rules-000', redirect_uris: ['https://rp.example/cb'] }]),
    read: (file) => resolveRuntime(loadSettings({ env: {}, properties: { 'svc.clients.file': file } }), { jwks, store: createMemoryStore(), logger: silentLogger }),
  },
  { name: 'SVC_CONFIG', prefix: 'the configuration file named by SVC_CONFIG: ', maxBytes: MiB, text: '{"svc.port": 8080}', read: async (file) => loadSettings({ env: {}, file }) },
  { name: 'the users file of the examples', prefix: 'the users file: ', maxBytes: 16 * MiB, text: '[]', read: async (file) => readUsersFile(file) },
];

/** A path in the test folder ending in .json (the configuration file must). */
const named = (what: string): string => join(dir, `${what}-${(n += 1)}.json`);
const written = (text: string | Buffer): string => {
  const file = named('file');
  real.writeFileSync(file, text, { mode: 0o600 });
  return file;
};
const fifo = (): string => {
  const path = named('fifo');
  execFileSync('mkfifo', [path]);
  return path;
};
/** What reading `file` comes to: "read", or the error's message. */
const outcome = (reader: Reader, file: string): Promise<string> =>
  reader.read(file).then(
    () => 'read',
    (err: unknown) => (err as Error).message,
  );

describe.each(READERS)('$name is read through the one JSON file reader', (reader) => {
  it('attack: a pipe nobody writes to (the start or a reload would wait for ever) and a device (/dev/zero, /dev/urandom: memory filled) are refused unopened, naming the file', async () => {
    const devices = ['/dev/zero', '/dev/urandom'].map((device) => {
      const file = named('device');
      real.symlinkSync(device, file);
      return file;
    });
    for (const file of [fifo(), ...devices]) {
      opened.length = 0;
      expect(await outcome(reader, file)).toContain(`${reader.prefix}${file} is not a regular file`);
      expect(opened).toEqual([]);
    }
  });

  it('attack: a file swapped for a pipe just after it was looked at is opened without waiting for a writer and refused as what it is', async () => {
    const file = written(reader.text);
    const swap = fifo();
    afterLook = { path: file, change: () => real.renameSync(swap, file) };
    opened.length = 0;
    expect(await outcome(reader, file)).toContain(`${reader.prefix}${file} is not a regular file`);
    const { O_NONBLOCK, O_NOCTTY } = real.constants;
    expect(opened.map(([path, flags]) => [path, Number(flags) & (O_NONBLOCK | O_NOCTTY)])).toEqual([[file, O_NONBLOCK | O_NOCTTY]]);
  });

  it(`attack: a file longer than the reader takes (valid JSON padded with spaces; /proc/self/pagemap, which says it is empty and never ends) is refused; honest: one of exactly that size is read`, async () => {
    const size = `${reader.maxBytes / MiB} MiB`;
    const pagemap = named('pagemap');
    real.symlinkSync('/proc/self/pagemap', pagemap);
    for (const file of [written(reader.text + ' '.repeat(reader.maxBytes + 1 - reader.text.length)), pagemap]) {
      expect(await outcome(reader, file)).toContain(`${reader.prefix}${file} holds more than ${size}`);
    }
    expect(await outcome(reader, written(reader.text + ' '.repeat(reader.maxBytes - reader.text.length)))).toBe('read');
  });

  it('attack: a directory is refused naming it; invalid JSON is refused naming the file and never its content', async () => {
    const folder = named('folder');
    real.mkdirSync(folder);
    expect(await outcome(reader, folder)).toContain(`${reader.prefix}cannot read ${folder}: it is a folder, not a file (EISDIR)`);
    const broken = written('{"client_secret": "SECRET-in-the-file",');
    const message = await outcome(reader, broken);
    expect(message).toContain(broken);
    expect(message).toMatch(/not valid JSON/);
    expect(message).not.toContain('SECRET');
  });

  it('honest: a regular file, one reached through links as Kubernetes mounts a secret (name → ..data/name, ..data → a dated folder), and one with a byte order mark and a trailing line feed are read', async () => {
    const mount = join(dir, `mount-${(n += 1)}`);
    real.mkdirSync(join(mount, '..2024_01_01'), { recursive: true });
    real.writeFileSync(join(mount, '..2024_01_01', 'file.json'), reader.text);
    real.symlinkSync('..2024_01_01', join(mount, '..data'));
    real.symlinkSync('..data/file.json', join(mount, 'file.json'));
    for (const file of [written(reader.text), join(mount, 'file.json'), written(`\uFEFF${reader.text}\n`)]) expect(await outcome(reader, file)).toBe('read');
  });
});

describe('the memory a read holds', () => {
  it('attack: a pipe or a terminal that gives a byte at a time (a line at a time) holds no more than the limit: each read is not kept in a 64 KiB buffer of its own', () => {
    const text = 'x'.repeat(4096);
    const file = written(text);
    trickled.add(file);
    const before = process.memoryUsage().arrayBuffers;
    heldMost = before;
    const bytes = readFileBytes(file, (reason) => new Error(reason), { maxBytes: 2 ** 16, streams: true });
    trickled.delete(file);
    expect(bytes.toString() === text).toBe(true);
    expect(heldMost - before).toBeLessThan(4 * MiB);
  });
});
