import { spawn } from 'node:child_process';
import { createServer } from 'node:http';

import { describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { runRelyingParty } from '../../examples/relying-party.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { pairwiseSubOf } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { signIn, userData } from '../helpers/flow.js';
import { freePort } from '../helpers/processes.js';
import { register } from '../helpers/registration.js';

const root = new URL('../..', import.meta.url).pathname;

/** `npx tsx examples/relying-party.ts` as the guide runs it, with `env`, standard input closed. */
function runExample(env: Record<string, string>): { output: () => string; errors: () => string; exited: Promise<number | null>; urlPrinted: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/relying-party.ts'], { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let printed: (url: string) => void = () => undefined;
  const urlPrinted = new Promise<string>((resolve) => (printed = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const url = /^(http\S+\/authorize\?\S+)$/m.exec(out)?.[1];
    if (url) printed(url);
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return { output: () => out, errors: () => err, exited: new Promise((resolve) => child.on('exit', resolve)), urlPrinted };
}

describe('examples/relying-party.ts against a live app (docs/relying-party.md)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });

  it('registers with an initial access token, runs the flow and decrypts the ID token and UserInfo', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const result = await runRelyingParty({
      issuer: running.issuer,
      initialAccessToken: token,
      redirectUri: 'http://localhost:8080/callback',
      authorize: async (url) => (await signIn(url.href, { login: 'demo', password: 'demo' })).callbackUrl,
    });
    expect(result.clientId).toEqual(expect.any(String));
    // The example registers without subject_type: pairwise, the provider's default; on the loopback interface, a sector of its own.
    expect(result.idTokenClaims).toMatchObject({ sub: pairwiseSubOf('http://localhost:8080/callback', 'demo-0001', result.clientId), name: 'Erika Mustermann', email: 'erika.mustermann@example.com', given_name: 'Erika', email_verified: true });
    // Each claim travels once (C5): the scope claims came in the ID token, UserInfo holds sub.
    expect(result.userinfo.sub).toBe(pairwiseSubOf('http://localhost:8080/callback', 'demo-0001', result.clientId));
    expect(userData(result.userinfo)).toEqual({});
  });

  it('runs as the guide says: registers, prints the URL, receives the callback itself and prints the decrypted claims', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const redirectUri = `http://localhost:${await freePort()}/callback`;
    const example = runExample({ SVC_ISSUER: running.issuer, SVC_INITIAL_ACCESS_TOKEN: token, SVC_REDIRECT_URI: redirectUri });
    const { callbackUrl } = await signIn(await example.urlPrinted, { login: 'demo', password: 'demo' });
    expect(callbackUrl.href.startsWith(`${redirectUri}?`)).toBe(true);
    const landing = await fetch(callbackUrl);
    expect(landing.status).toBe(200);
    expect(await example.exited).toBe(0);
    const printed = JSON.parse(example.output().slice(example.output().indexOf('{'))) as { idTokenClaims: Record<string, unknown>; userinfo: Record<string, unknown> };
    expect(printed.idTokenClaims).toMatchObject({ sub: pairwiseSubOf(redirectUri, 'demo-0001', String(printed.idTokenClaims.aud)), name: 'Erika Mustermann', email: 'erika.mustermann@example.com' });
    expect(printed.userinfo.sub).toBe(printed.idTokenClaims.sub);
    expect(userData(printed.userinfo)).toEqual({});
  });

  it('stops before spending the one-use token when it can neither receive the callback nor read a pasted address', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const { token } = await issueInitialAccessToken(running.app.svc.provider);
      const example = runExample({ SVC_ISSUER: running.issuer, SVC_INITIAL_ACCESS_TOKEN: token, SVC_REDIRECT_URI: `http://localhost:${port}/callback` });
      expect(await example.exited).toBe(2);
      expect(example.errors()).toContain(`cannot listen on localhost:${port} for the callback, and standard input is not a terminal to paste it into`);
      expect(example.errors()).toContain('the token is still unused');
      expect((await register(running, { redirect_uris: ['https://rp.example/cb'] }, token)).status).toBe(201);
    } finally {
      busy.close();
    }
  });

  it('says what to set when the token is missing', async () => {
    const example = runExample({ SVC_ISSUER: running.issuer });
    expect(await example.exited).toBe(2);
    expect(example.errors()).toContain('set SVC_INITIAL_ACCESS_TOKEN');
  });
});
