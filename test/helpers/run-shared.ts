import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A JSON value made once per test run: the first worker to need `name` makes it into the run's own folder
 * (`SVC_TEST_RUN_DIR`, made and removed by Jest's global setup and teardown) and every later file of the run
 * reads it from there; outside such a run, once per call. For what is slow to make and the same for every
 * test, such as RSA keys (a few hundred CPU milliseconds each).
 */
export async function runShared<T>(name: string, make: () => Promise<T>): Promise<T> {
  const dir = process.env.SVC_TEST_RUN_DIR;
  const file = dir ? join(dir, `${name}.json`) : undefined;
  if (file && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as T;
  const value = await make();
  if (file) {
    // Workers that race here each write a whole value and the last rename wins: every reader sees one whole value.
    writeFileSync(`${file}.${process.pid}`, JSON.stringify(value), { mode: 0o600 });
    renameSync(`${file}.${process.pid}`, file);
  }
  return value;
}
