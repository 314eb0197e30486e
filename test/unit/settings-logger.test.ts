import { describe, expect, it } from '@jest/globals';

import { createSettingsLogger, loadSettings } from '../../lib/index.js';

describe('createSettingsLogger', () => {
  it('refuses the whole Settings object (its former argument) instead of quietly logging at info', () => {
    const settings = loadSettings({ env: {}, properties: { 'svc.log.level': 'silent', 'svc.log.format': 'json' } });
    expect(() => createSettingsLogger(settings as never, false)).toThrow(/settings\.log/);
  });

  it('takes the level and format of settings.log', () => {
    const settings = loadSettings({ env: {}, properties: { 'svc.log.level': 'warn', 'svc.log.format': 'json' } });
    const logger = createSettingsLogger(settings.log, settings.production);
    expect(logger.pino.level).toBe('warn');
  });
});
