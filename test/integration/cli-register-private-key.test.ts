import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../lib/index.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { runCli as cli } from '../helpers/cli.js';

describe("svc-connect register never sends a relying party's private key", () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-register-'));
  const running = appPerSuite();
  // Stands in for the provider: records every body it is sent.
  const bodies: string[] = [];
  const recorder = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      bodies.push(text);
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_client_metadata"}');
    });
  });
  let recorderUrl = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    recorderUrl = `http://127.0.0.1:${(recorder.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => recorder.close(() => resolve())));

  const keyPair = async (): Promise<{ registration: { jwks: { keys: Record<string, unknown>[] } }; privateJwk: Record<string, unknown> }> => {
    const privateOut = join(dir, `private-${bodies.length}-${Math.random()}.jwk`);
    const made = await cli(['client-keys', '--redirect-uri', 'https://rp.example/cb', '--private-out', privateOut]);
    return { registration: JSON.parse(made.stdout) as { jwks: { keys: Record<string, unknown>[] } }, privateJwk: JSON.parse(readFileSync(privateOut, 'utf8')) as Record<string, unknown> };
  };

  it('attack: a body holding the private JWK (the --private-out file given as --body, or pasted into jwks) is refused before anything is sent (exit 2)', async () => {
    const { registration, privateJwk } = await keyPair();
    const pasted = join(dir, 'pasted.json');
    writeFileSync(pasted, JSON.stringify({ ...registration, jwks: { keys: [privateJwk] } }));
    const bare = join(dir, 'bare.json');
    writeFileSync(bare, JSON.stringify(privateJwk));
    for (const body of [pasted, bare]) {
      const run = await cli(['register', '--url', recorderUrl, '--body', body], { SVC_INITIAL_ACCESS_TOKEN: 'some-initial-access-token' });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('private');
      expect(run.stderr).not.toContain(String(privateJwk.d));
    }
    expect(bodies).toEqual([]);
  });

  it('attack: a body that is not a JSON object (null, a list, a string) is refused before anything is sent (exit 2); honest: one saved with a byte order mark registers', async () => {
    for (const [name, text] of <[string, string][]>[['null', 'null'], ['list', '[{"redirect_uris":["https://rp.example/cb"]}]'], ['string', '"https://rp.example/cb"']]) {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, text);
      const run = await cli(['register', '--url', recorderUrl, '--body', file], { SVC_INITIAL_ACCESS_TOKEN: 'some-initial-access-token' });
      expect([name, run.code, run.stdout, run.stderr]).toEqual([name, 2, '', `svc-connect register: --body: ${file} holds no JSON object (the registration body client-keys prints)\n`]);
    }
    expect(bodies).toEqual([]);
    const bom = join(dir, 'bom.json');
    writeFileSync(bom, '\ufeff{"redirect_uris":["https://rp.example/cb"]}');
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const run = await cli(['register', '--url', running.baseUrl, '--body', bom], { SVC_INITIAL_ACCESS_TOKEN: token });
    expect([run.code, (JSON.parse(run.stdout) as { redirect_uris: string[] }).redirect_uris]).toEqual([0, ['https://rp.example/cb']]);
  });

  it('honest: the registration body client-keys printed registers with 201, its public key kept', async () => {
    const { registration } = await keyPair();
    const file = join(dir, 'registration.json');
    writeFileSync(file, JSON.stringify(registration));
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const run = await cli(['register', '--url', running.baseUrl, '--body', file], { SVC_INITIAL_ACCESS_TOKEN: token });
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.stdout) as { client_id: string; jwks: { keys: Record<string, unknown>[] } };
    expect(answer.client_id).toEqual(expect.any(String));
    expect(answer.jwks.keys[0]?.n).toBe(registration.jwks.keys[0]?.n);
  });
});
