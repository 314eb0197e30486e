import { afterAll, beforeAll } from '@jest/globals';

import { startApp, type RunningApp, type StartOptions } from './app.js';

/**
 * An app of the enclosing `describe`: started by {@link startApp} before its tests (with `options`,
 * or what `options()` gives then) and closed after them; the returned object reads the running app.
 */
export function appPerSuite(options: StartOptions | (() => StartOptions | Promise<StartOptions>) = {}): RunningApp {
  let started: RunningApp | undefined;
  beforeAll(async () => {
    started = await startApp(typeof options === 'function' ? await options() : options);
  });
  afterAll(async () => started?.close());
  const running = (): RunningApp => {
    if (!started) throw new Error('the suite app starts in beforeAll');
    return started;
  };
  return {
    get baseUrl() {
      return running().baseUrl;
    },
    get issuer() {
      return running().issuer;
    },
    get app() {
      return running().app;
    },
    get settings() {
      return running().settings;
    },
    close: () => running().close(),
  };
}
