import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { SettingsError } from '../../lib/index.js';

/** The {@link SettingsError} `fn` throws; any other outcome fails the test. */
export function captureError(fn: () => unknown): SettingsError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SettingsError) return err;
    throw err;
  }
  throw new Error('expected a SettingsError');
}

/** Writes scratch files into a fresh folder named after `prefix`; each call returns the file's path. */
export function scratchFiles(prefix: string): (name: string, text: string | Uint8Array) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return (name, text) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
}
