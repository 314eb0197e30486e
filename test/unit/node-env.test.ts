import { describe, expect, it } from '@jest/globals';

import { loadSettings } from '../../lib/index.js';
import { findUnsafeDefaults } from '../../lib/settings/unsafe.js';
import { isProductionEnvironment } from '../../lib/settings/load.js';
import { captureError } from '../helpers/settings-errors.js';

describe('NODE_ENV: every spelling of production is production (the refusals cannot be turned into warnings by a typo)', () => {
  it.each(['production', 'Production', 'PRODUCTION', ' production ', 'production\n', 'prod', 'PROD'])('%j is production', (value) => {
    expect(isProductionEnvironment(value)).toBe(true);
    const settings = loadSettings({ env: { NODE_ENV: value } });
    expect(settings.production).toBe(true);
    expect(settings.demo.enabled).toBe(false);
    expect(findUnsafeDefaults(settings).map((f) => f.property)).toContain('svc.redis.url');
  });

  it.each([undefined, '', 'development', 'test', 'staging', 'dev', 'preproduction', 'ci'])('%j is not production', (value) => {
    expect(isProductionEnvironment(value)).toBe(false);
    expect(loadSettings({ env: value === undefined ? {} : { NODE_ENV: value } }).production).toBe(false);
  });

  it.each(['productio', 'prodution', 'Producton', 'porduction', 'productoin', ' productions '])(
    'stops on %j, production misspelled, instead of quietly turning the production refusals into warnings',
    (value) => {
      expect(isProductionEnvironment(value)).toBe(false);
      const err = captureError(() => loadSettings({ env: { NODE_ENV: value } }));
      expect(err.properties).toEqual(['NODE_ENV']);
      expect(err.message).toBe(`NODE_ENV=${value.trim()} looks like production misspelled: write production for the production checks, or a word of its own (development, test) for another environment`);
    },
  );
});
