import { describe, expect, it } from '@jest/globals';

/** The Jest transform (test/esbuild-transform.js), loaded as Jest loads it. */
interface Transform {
  getCacheKey(source: string, filename: string, options: { instrument?: boolean; configString?: string }): string;
}
const transform = ((await import(String(new URL('../esbuild-transform.js', import.meta.url)))) as { default: Transform }).default;

describe("the Jest transform's cache key", () => {
  const source = 'export const x: number = 1;\n';
  const file = '/repo/lib/x.ts';

  // Jest caches what it returns (instrumented by Jest itself under --coverage) under this key alone.
  it('differs with and without coverage instrumentation, so a coverage run never reads uninstrumented code', () => {
    expect(transform.getCacheKey(source, file, { instrument: true, configString: '{}' })).not.toBe(transform.getCacheKey(source, file, { instrument: false, configString: '{}' }));
  });

  it('differs for another Jest configuration', () => {
    expect(transform.getCacheKey(source, file, { instrument: false, configString: '{"a":1}' })).not.toBe(transform.getCacheKey(source, file, { instrument: false, configString: '{"a":2}' }));
  });

  it('is the same for the same file, source and options', () => {
    expect(transform.getCacheKey(source, file, { instrument: false, configString: '{}' })).toBe(transform.getCacheKey(source, file, { instrument: false, configString: '{}' }));
  });
});
