import { describe, expect, it } from '@jest/globals';

import { loadSettings } from '../../lib/index.js';
import { findUnsafeDefaults } from '../../lib/settings/unsafe.js';
import { isProductionEnvironment } from '../../lib/settings/load.js';

describe('NODE_ENV: every spelling of production is production (the refusals cannot be turned into warnings by a typo)', () => {
  it.each(['production', 'Production', 'PRODUCTION', ' production ', 'production\n', 'prod', 'PROD'])('%j is production', (value) => {
    expect(isProductionEnvironment(value)).toBe(true);
    const settings = loadSettings({ env: { NODE_ENV: value } });
    expect(settings.production).toBe(true);
    expect(settings.demo.enabled).toBe(false);
    expect(findUnsafeDefaults(settings).map((f) => f.property)).toContain('svc.redis.url');
  });

  it.each([undefined, '', 'development', 'test', 'staging', 'productio'])('%j is not production', (value) => {
    expect(isProductionEnvironment(value)).toBe(false);
    expect(loadSettings({ env: value === undefined ? {} : { NODE_ENV: value } }).production).toBe(false);
  });
});
