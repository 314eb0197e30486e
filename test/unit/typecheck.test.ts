import { execFileSync } from 'node:child_process';

import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;

describe('strict TypeScript', () => {
  it('type-checks lib, adapters, policies, examples and tests (tsc --noEmit)', () => {
    let output = '';
    try {
      execFileSync(`${root}node_modules/.bin/tsc`, ['--noEmit', '-p', `${root}tsconfig.json`], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(output).toBe('');
  }, 120_000);
});
