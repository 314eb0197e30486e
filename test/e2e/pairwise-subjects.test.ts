
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { pairwiseSub } from '../../policies/subjects.js';
import { confidentialClient, pairwiseSubOf, startApp, TEST_PAIRWISE_KEY, type RunningApp } from '../helpers/app.js';
import { registerClient, updateRegistration } from '../helpers/clients.js';
import { runCodeFlow } from '../helpers/flow.js';
import { isUnspent, manage, register, startDocServer, trustForOutboundFetch, type HttpsDocServer } from '../helpers/registration.js';
import { appPerSuite } from '../helpers/suite-app.js';

const KEY = 'pairwise-key-for-tests-0123456789abcdef';
const OTHER_KEY = 'another-pairwise-key-0123456789abcdefgh';
const staticClient = confidentialClient({ client_id: 'static-rp', redirect_uris: ['https://static.example/cb'] });

describe('pairwise subject identifiers (OpenID Connect Core 8) [memory]', () => {
  let running: RunningApp;
  let docs: HttpsDocServer;
  let distrust = (): void => undefined;
  let sectorDoc: unknown = [];
  let sectorRequests = 0;
  const iat = async (): Promise<string> => (await issueInitialAccessToken(running.app.svc.provider)).token;
  const start = (properties: Record<string, string | boolean> = {}): Promise<RunningApp> =>
    startApp({ clients: [staticClient], properties: { 'svc.subject.pairwise-key': KEY, 'svc.fetch.allow-private-network': true, ...properties } });
  const storedClient = (id: string): Promise<unknown> => running.app.svc.store.adapter('Client').find(id);

  beforeAll(async () => {
    running = await start();
    docs = await startDocServer('https');
    // The app's fetch passes no CA of its own: trust the document server the way a system trust store would.
    distrust = trustForOutboundFetch(docs.ca);
    docs.handler = (_req, res) => {
      sectorRequests += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(sectorDoc));
    };
  });
  afterAll(async () => {
    distrust();
    await docs.close();
    await running.close();
  });

  it('discovery advertises public and pairwise', async () => {
    const meta = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(meta.subject_types_supported).toEqual(['public', 'pairwise']);
  });

  describe('the default subject type', () => {
    it('a client registered without subject_type is pairwise, and the response says so', async () => {
      const res = await register(running, { redirect_uris: ['https://rp.example/cb', 'https://rp.example/other'] }, await iat());
      expect(res.status).toBe(201);
      expect(res.body.subject_type).toBe('pairwise');
    });

    it('a client whose redirect URIs span several hosts gets public instead of a refusal (localhost and 127.0.0.1)', async () => {
      const redirect_uris = ['http://localhost:8080/cb', 'http://127.0.0.1:8080/cb'];
      const res = await register(running, { redirect_uris, application_type: 'native', token_endpoint_auth_method: 'none' }, await iat());
      expect(res.status).toBe(201);
      expect(res.body.subject_type).toBe('public');
    });

    it('an explicit pairwise client spanning several hosts without a sector_identifier_uri is refused, nothing stored', async () => {
      const token = await iat();
      const res = await register(running, { redirect_uris: ['https://a.example/cb', 'https://b.example/cb'], subject_type: 'pairwise' }, token);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client_metadata');
      expect(res.body.error_description).toMatch(/sector_identifier_uri/);
      expect(await isUnspent(running, token)).toBe(true);
    });

    it('malformed redirect_uris of a pairwise client are refused as such, never a 500', async () => {
      for (const redirect_uris of [undefined, [], [42], 'https://rp.example/cb', ['not a url'], ['https://rp.example/cb', { href: 'x' }]]) {
        const token = await iat();
        const res = await register(running, { redirect_uris }, token);
        expect([res.status, res.body.error]).toEqual([400, expect.stringMatching(/^invalid_(redirect_uri|client_metadata)$/)]);
        expect(await isUnspent(running, token)).toBe(true);
      }
    });

    it('an unknown subject_type is refused by name', async () => {
      const token = await iat();
      const res = await register(running, { redirect_uris: ['https://rp.example/cb'], subject_type: 'secret' }, token);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client_metadata');
      expect(res.body.error_description).toBe('subject_type: must be public or pairwise');
      expect(await isUnspent(running, token)).toBe(true);
    });

    it('svc.subject.default-type=public makes an unspecified client public; pairwise stays on request', async () => {
      const other = await startApp({ properties: { 'svc.subject.pairwise-key': KEY, 'svc.subject.default-type': 'public' } });
      try {
        const token = (await issueInitialAccessToken(other.app.svc.provider)).token;
        expect((await register(other, { redirect_uris: ['https://rp.example/cb'] }, token)).body.subject_type).toBe('public');
        const token2 = (await issueInitialAccessToken(other.app.svc.provider)).token;
        expect((await register(other, { redirect_uris: ['https://rp.example/cb'], subject_type: 'pairwise' }, token2)).body.subject_type).toBe('pairwise');
      } finally {
        await other.close();
      }
    });
  });

  describe('subs in the code flow (openid-client)', () => {
    it('two clients in different sectors get different subs for one person; one client gets the same sub twice', async () => {
      const first = await registerClient(running, 'plain', { redirect_uris: ['https://rp.example/cb'] });
      const second = await registerClient(running, 'plain', { redirect_uris: ['https://other.example/cb'] });
      const a1 = await runCodeFlow(running.issuer, first.metadata);
      const a2 = await runCodeFlow(running.issuer, first.metadata);
      const b = await runCodeFlow(running.issuer, second.metadata);
      expect(a1.claims.sub).toBe(pairwiseSub(KEY, 'rp.example', 'demo-0001'));
      expect(a2.claims.sub).toBe(a1.claims.sub);
      expect(a1.userinfo.sub).toBe(a1.claims.sub);
      expect(b.claims.sub).toBe(pairwiseSub(KEY, 'other.example', 'demo-0001'));
      expect(b.claims.sub).not.toBe(a1.claims.sub);
      expect([a1.claims.sub, b.claims.sub]).not.toContain('demo-0001');
    });

    it('a public client sees the account id', async () => {
      const client = await registerClient(running, 'plain', { subject_type: 'public' });
      expect((await runCodeFlow(running.issuer, client.metadata)).claims.sub).toBe('demo-0001');
    });

    it('clients sharing a sector_identifier_uri share one sector across hosts', async () => {
      const uri = `${docs.url}/sector.json`;
      sectorDoc = ['https://app.example/cb', 'https://www.example/cb'];
      const app = await registerClient(running, 'plain', { redirect_uris: ['https://app.example/cb'], sector_identifier_uri: uri });
      const web = await registerClient(running, 'plain', { redirect_uris: ['https://www.example/cb'], sector_identifier_uri: uri });
      expect(app.metadata.subject_type).toBe('pairwise');
      const subs = [(await runCodeFlow(running.issuer, app.metadata)).claims.sub, (await runCodeFlow(running.issuer, web.metadata)).claims.sub];
      // The sector is the document, not its host (policies/subjects.ts documentOf).
      expect(subs).toEqual([pairwiseSub(KEY, new URL(uri).href, 'demo-0001'), pairwiseSub(KEY, new URL(uri).href, 'demo-0001')]);
    });

    it('a static client is pairwise by default, and keeps its sub across a restart with the same key only', async () => {
      const before = (await runCodeFlow(running.issuer, staticClient)).claims.sub;
      expect(before).toBe(pairwiseSub(KEY, 'static.example', 'demo-0001'));
      const again = await start();
      const rotated = await start({ 'svc.subject.pairwise-key': OTHER_KEY });
      try {
        expect((await runCodeFlow(again.issuer, staticClient)).claims.sub).toBe(before);
        expect((await runCodeFlow(rotated.issuer, staticClient)).claims.sub).not.toBe(before);
      } finally {
        await Promise.all([again.close(), rotated.close()]);
      }
    });
  });

  describe('sector_identifier_uri (OpenID Connect Registration 5)', () => {
    const refused = async (body: Record<string, unknown>, app: RunningApp = running): Promise<string> => {
      const token = (await issueInitialAccessToken(app.app.svc.provider)).token;
      const res = await register(app, body, token);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client_metadata');
      expect(await isUnspent(app, token)).toBe(true);
      return String(res.body.error_description);
    };

    it('a document listing every redirect_uri is accepted, also for redirect URIs on several hosts', async () => {
      sectorDoc = ['https://a.example/cb', 'https://b.example/cb', 'https://c.example/unused'];
      const res = await register(running, { redirect_uris: ['https://a.example/cb', 'https://b.example/cb'], sector_identifier_uri: `${docs.url}/s` }, await iat());
      expect(res.status).toBe(201);
      expect(res.body.subject_type).toBe('pairwise');
      expect(res.body.sector_identifier_uri).toBe(`${docs.url}/s`);
    });

    it('refuses a document that does not list a redirect_uri, naming it', async () => {
      sectorDoc = ['https://a.example/cb'];
      const description = await refused({ redirect_uris: ['https://a.example/cb', 'https://evil.example/cb'], sector_identifier_uri: `${docs.url}/s` });
      expect(description).toContain('does not list every redirect_uri (missing https://evil.example/cb)');
    });

    it('refuses a document that is not a JSON array of strings', async () => {
      for (const doc of [{ redirect_uris: ['https://a.example/cb'] }, ['https://a.example/cb', 7]]) {
        sectorDoc = doc;
        expect(await refused({ redirect_uris: ['https://a.example/cb'], sector_identifier_uri: `${docs.url}/s` })).toMatch(/must be a JSON array of URL strings/);
      }
    });

    it('refuses an unreachable sector_identifier_uri', async () => {
      const gone = await startDocServer('https');
      await gone.close();
      expect(await refused({ redirect_uris: ['https://a.example/cb'], sector_identifier_uri: `${gone.url}/s` })).toMatch(/^sector_identifier_uri: could not be fetched/);
    });

    it('refuses a sector_identifier_uri on a private address (the guarded fetch), and never asks it', async () => {
      const guarded = await startApp({ properties: { 'svc.subject.pairwise-key': KEY } });
      try {
        const asked = sectorRequests;
        sectorDoc = ['https://a.example/cb'];
        const description = await refused({ redirect_uris: ['https://a.example/cb'], sector_identifier_uri: `${docs.url}/s` }, guarded);
        expect(description).toMatch(/^sector_identifier_uri: could not be fetched: .*(private|loopback)/);
        expect(sectorRequests).toBe(asked);
      } finally {
        await guarded.close();
      }
    });

    it('is checked also with an invitation issued before the policy existed (its token names older policies, or none)', async () => {
      sectorDoc = ['https://a.example/cb'];
      for (const policies of [['svc/algorithms', 'svc/privacy-metadata', 'svc/certificates', 'svc/key-vetting', 'svc/signature-keys'], undefined]) {
        const token = await iat();
        const tokens = running.app.svc.store.adapter('InitialAccessToken');
        const stored = await tokens.find(token);
        const { policies: _current, ...rest } = stored ?? {};
        await tokens.upsert(token, policies ? { ...rest, policies } : rest, 3600);
        const res = await register(running, { redirect_uris: ['https://evil.example/cb'], sector_identifier_uri: `${docs.url}/s` }, token);
        expect([res.status, res.body.error]).toEqual([400, 'invalid_client_metadata']);
        expect(String(res.body.error_description)).toContain('missing https://evil.example/cb');
        expect(await isUnspent(running, token)).toBe(true);
      }
    });

    it('is checked at registration only: a later change of the document does not break the registered client', async () => {
      sectorDoc = ['https://later.example/cb'];
      const client = await registerClient(running, 'plain', { redirect_uris: ['https://later.example/cb'], sector_identifier_uri: `${docs.url}/later` });
      sectorDoc = [];
      const asked = sectorRequests;
      expect((await runCodeFlow(running.issuer, client.metadata)).claims.sub).toBe(pairwiseSub(KEY, new URL(`${docs.url}/later`).href, 'demo-0001'));
      expect(sectorRequests).toBe(asked);
    });
  });

  it("a static client's sector_identifier_uri is checked when first loaded, through the guarded fetch", async () => {
    sectorDoc = ['https://static-a.example/cb'];
    const listed = confidentialClient({ client_id: 'static-listed', redirect_uris: ['https://static-a.example/cb'], sector_identifier_uri: `${docs.url}/static` });
    const unlisted = confidentialClient({ client_id: 'static-unlisted', redirect_uris: ['https://static-b.example/cb'], sector_identifier_uri: `${docs.url}/static` });
    const app = await startApp({ clients: [listed, unlisted], properties: { 'svc.subject.pairwise-key': KEY, 'svc.fetch.allow-private-network': true } });
    try {
      expect((await runCodeFlow(app.issuer, listed)).claims.sub).toBe(pairwiseSub(KEY, new URL(`${docs.url}/static`).href, 'demo-0001'));
      const query = new URLSearchParams({ client_id: 'static-unlisted', response_type: 'code', scope: 'openid', redirect_uri: 'https://static-b.example/cb', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
      const refused = await fetch(`${app.issuer}/authorize?${query.toString()}`, { redirect: 'manual' });
      expect(refused.status).toBe(400);
      const page = await refused.text();
      expect(page).toContain('<code>invalid_client_metadata</code>');
      expect(page).toContain('all registered redirect_uris must be included in the sector_identifier_uri response');
    } finally {
      await app.close();
    }
  });

  describe('updates keep the subject type and the sector', () => {
    const registered = async (body: Record<string, unknown>): Promise<{ uri: string; token: string; id: string }> => {
      const res = await register(running, body, await iat());
      expect(res.status).toBe(201);
      return { uri: String(res.body.registration_client_uri), token: String(res.body.registration_access_token), id: String(res.body.client_id) };
    };
    const refusedUpdate = async (c: { uri: string; token: string; id: string }, body: Record<string, unknown>, error = 'invalid_client_metadata'): Promise<string> => {
      const before = await storedClient(c.id);
      const res = await manage(c.uri, 'PUT', c.token, { client_id: c.id, ...body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(error);
      expect(await storedClient(c.id)).toEqual(before);
      return String(res.body.error_description);
    };

    it('an update without subject_type keeps the registered one and shows it', async () => {
      const c = await registered({ redirect_uris: ['https://rp.example/cb'] });
      const res = await manage(c.uri, 'PUT', c.token, { client_id: c.id, redirect_uris: ['https://rp.example/cb2'], client_name: 'renamed' });
      expect(res.status).toBe(200);
      expect(res.body.subject_type).toBe('pairwise');
      const multi = await registered({ redirect_uris: ['https://a.example/cb', 'https://b.example/cb'] });
      const updated = await manage(multi.uri, 'POST', multi.token, { client_id: multi.id, redirect_uris: ['https://a.example/cb'] });
      expect(updated.status).toBe(200);
      expect(updated.body.subject_type).toBe('public');
    });

    it('an update cannot change subject_type (POST and PUT)', async () => {
      const c = await registered({ redirect_uris: ['https://rp.example/cb'] });
      expect(await refusedUpdate(c, { redirect_uris: ['https://rp.example/cb'], subject_type: 'public' })).toBe(
        'subject_type: is fixed at registration (pairwise); register a new client to change it',
      );
      const p = await registered({ redirect_uris: ['https://rp.example/cb'], subject_type: 'public' });
      const res = await manage(p.uri, 'POST', p.token, { client_id: p.id, redirect_uris: ['https://rp.example/cb'], subject_type: 'pairwise' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client_metadata');
    });

    it("an update cannot move a pairwise client's sector: not by redirect_uris, not by sector_identifier_uri", async () => {
      const c = await registered({ redirect_uris: ['https://rp.example/cb'] });
      // RFC 7591 3.2.2 (and oidc-provider) answer a fault in redirect_uris with invalid_redirect_uri.
      expect(await refusedUpdate(c, { redirect_uris: ['https://elsewhere.example/cb'] }, 'invalid_redirect_uri')).toMatch(/^redirect_uris: would move the pairwise sector from rp.example to elsewhere.example/);
      sectorDoc = ['https://rp.example/cb'];
      expect(await refusedUpdate(c, { redirect_uris: ['https://rp.example/cb'], sector_identifier_uri: `${docs.url}/s` })).toMatch(/^sector_identifier_uri: would move the pairwise sector/);
    });

    it('an update without sector_identifier_uri keeps the registered one, and the document is checked again', async () => {
      sectorDoc = ['https://a.example/cb', 'https://b.example/cb'];
      const c = await registered({ redirect_uris: ['https://a.example/cb'], sector_identifier_uri: `${docs.url}/s` });
      const res = await manage(c.uri, 'PUT', c.token, { client_id: c.id, redirect_uris: ['https://a.example/cb', 'https://b.example/cb'] });
      expect(res.status).toBe(200);
      expect(res.body.sector_identifier_uri).toBe(`${docs.url}/s`);
      const next = { ...c, token: String(res.body.registration_access_token) };
      expect(await refusedUpdate(next, { redirect_uris: ['https://a.example/cb', 'https://unlisted.example/cb'] })).toContain('missing https://unlisted.example/cb');
    });
  });
});

describe('pairwise subjects of apps that redirect to the loopback interface or a private-use scheme (C12.12, RFC 8252 7.1, 7.3)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });
  const nativeApp = (redirect: string) => registerClient(running, 'plain', { redirect_uris: [redirect], application_type: 'native' });
  const subOf = async (client: ClientMetadata): Promise<string> => (await runCodeFlow(running.issuer, client, { skipUserinfo: true })).claims.sub;
  /** The `sub` of the sector a loopback redirect URI's host would be. */
  const hostSub = (uri: string): string => pairwiseSub(TEST_PAIRWISE_KEY, new URL(uri).host, 'demo-0001');

  it('two unrelated native apps that both redirect to 127.0.0.1, localhost or [::1] get unrelated subs for one person', async () => {
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '127.0.0.1:8400']) {
      const one = await nativeApp(`http://${host}/callback`);
      const other = await nativeApp(`http://${host}/oauth2/redirect`);
      expect([one.metadata.subject_type, other.metadata.subject_type]).toEqual(['pairwise', 'pairwise']);
      const subs = [await subOf(one.metadata), await subOf(other.metadata)];
      expect(subs[0]).not.toBe(subs[1]);
      expect(subs).not.toContain('demo-0001');
      expect(subs).not.toContain(hostSub(`http://${host}/`));
    }
  });

  it('two unrelated apps whose private-use redirect URIs share an authority (`://callback`) get unrelated subs for one person', async () => {
    const alpha = await nativeApp('com.alpha.app://callback');
    const beta = await nativeApp('org.beta.mail://callback/oauth');
    expect([alpha.metadata.subject_type, beta.metadata.subject_type]).toEqual(['pairwise', 'pairwise']);
    expect(await subOf(beta.metadata)).not.toBe(await subOf(alpha.metadata));
  });

  it("an app that registers another app's private-use scheme (no one owns a scheme) does not get that app's subs", async () => {
    const victim = await nativeApp('com.victim.bank:/oauth2redirect');
    const copycat = await nativeApp('com.victim.bank:/elsewhere');
    expect(await subOf(copycat.metadata)).not.toBe(await subOf(victim.metadata));
  });

  it('honest: one native app keeps its sub across sign-ins and an update of its registration', async () => {
    for (const [uri, added] of [['http://127.0.0.1/callback', 'http://127.0.0.1/other'], ['com.example.notes:/cb', 'com.example.notes:/other']] as const) {
      const app = await nativeApp(uri);
      const first = await subOf(app.metadata);
      expect(first).not.toBe('demo-0001');
      expect(await subOf(app.metadata)).toBe(first);
      const updated = await updateRegistration(app, { client_name: 'renamed', redirect_uris: [uri, added] });
      expect(updated.metadata.subject_type).toBe('pairwise');
      expect(await subOf(updated.metadata)).toBe(first);
    }
  });

  it('two unrelated web clients that both redirect to one loopback host and port get unrelated subs for one person', async () => {
    // Registered without application_type (web, RFC 7591's default), as many desktop apps and local development setups do.
    for (const [mine, theirs] of [['http://localhost:8080/callback', 'http://localhost:8080/callback'], ['http://127.0.0.1:8400/callback', 'http://127.0.0.1:8400/oauth2'], ['https://localhost/cb', 'https://localhost/other']] as const) {
      const one = await registerClient(running, 'plain', { redirect_uris: [mine] });
      const other = await registerClient(running, 'plain', { redirect_uris: [theirs] });
      expect([one.metadata.application_type, one.metadata.subject_type, other.metadata.subject_type]).toEqual(['web', 'pairwise', 'pairwise']);
      const subs = [await subOf(one.metadata), await subOf(other.metadata)];
      expect(subs[0]).not.toBe(subs[1]);
      expect(subs).not.toContain(hostSub(mine));
    }
  });

  it('honest: a web client on the loopback interface keeps its sub across sign-ins and an update of its registration', async () => {
    const web = await registerClient(running, 'plain', { redirect_uris: ['http://localhost:8080/callback'] });
    const first = await subOf(web.metadata);
    expect(first).not.toBe('demo-0001');
    expect(await subOf(web.metadata)).toBe(first);
    const updated = await updateRegistration(web, { client_name: 'renamed', redirect_uris: ['http://localhost:8080/callback', 'http://localhost:8080/other'] });
    expect(updated.metadata.subject_type).toBe('pairwise');
    expect(await subOf(updated.metadata)).toBe(first);
  });

  it('honest: a web client keeps the host of its redirect URI as its sector, and a native app on https too', async () => {
    const web = await registerClient(running, 'plain', { redirect_uris: ['https://rp.example/cb'] });
    const claimed = await registerClient(running, 'plain', { redirect_uris: ['https://app.rp.example/cb'], application_type: 'native' });
    expect(await subOf(web.metadata)).toBe(pairwiseSubOf('https://rp.example/cb'));
    expect(await subOf(claimed.metadata)).toBe(pairwiseSubOf('https://app.rp.example/cb'));
  });
});

describe('sector_identifier_uri documents that merely share a host are two sectors (docs/spec-decisions.md)', () => {
  const running = appPerSuite({ properties: { 'svc.fetch.allow-private-network': true } });
  let docs: HttpsDocServer;
  let distrust = (): void => undefined;
  const documents = new Map<string, string[]>();
  beforeAll(async () => {
    docs = await startDocServer('https');
    distrust = trustForOutboundFetch(docs.ca);
    docs.handler = (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(documents.get(req.url ?? '') ?? []));
    };
  });
  afterAll(async () => {
    distrust();
    await docs.close();
  });
  const withSector = async (redirect: string, path: string) => {
    documents.set(path, [...(documents.get(path) ?? []), redirect]);
    return registerClient(running, 'plain', { redirect_uris: [redirect], sector_identifier_uri: `${docs.url}${path}` });
  };
  const subOf = async (client: ClientMetadata): Promise<string> => (await runCodeFlow(running.issuer, client, { skipUserinfo: true })).claims.sub;

  // A relying party that keeps its sector document on a host others can publish on (raw.githubusercontent.com, a
  // storage bucket's host) would share its sector with whoever publishes a document of their own there.
  it('a relying party cannot join another\'s sector by publishing its own sector document on the host where the other keeps its one', async () => {
    const honest = await withSector('https://honest.example/cb', '/honest-rp/sector.json');
    const stranger = await withSector('https://stranger.example/cb', '/stranger/sector.json');
    expect(await subOf(stranger.metadata)).not.toBe(await subOf(honest.metadata));
  });

  it('honest: clients naming one sector document share one sector across hosts', async () => {
    const web = await withSector('https://www.group.example/cb', '/group/sector.json');
    const app = await withSector('https://app.group.example/cb', '/group/sector.json');
    expect(await subOf(app.metadata)).toBe(await subOf(web.metadata));
  });
});

describe('a native app whose later redirect URI is a private-use scheme with a relying party\'s host as authority (C12.12)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });
  /** A code flow of `client` redirected to `redirect` (one of its registered redirect URIs). */
  const subAt = async (client: ClientMetadata, redirect: string): Promise<string> =>
    (await runCodeFlow(running.issuer, { ...client, redirect_uris: [redirect] }, { skipUserinfo: true })).claims.sub;

  it("an app listing the victim's https redirect first and its own scheme on the victim's host second does not receive the victim's subs", async () => {
    const victim = await registerClient(running, 'plain', { redirect_uris: ['https://bank.example/cb'] });
    const victimSub = await subAt(victim.metadata, 'https://bank.example/cb');
    expect(victimSub).toBe(pairwiseSubOf('https://bank.example/cb'));
    // The app never receives a code at bank.example; it receives one at its own scheme on the device.
    const app = await registerClient(running, 'plain', {
      application_type: 'native',
      redirect_uris: ['https://bank.example/cb', 'com.attacker.app://bank.example/cb'],
    });
    expect(await subAt(app.metadata, 'com.attacker.app://bank.example/cb')).not.toBe(victimSub);
  });

  it('an explicit pairwise app with such a pair of redirect URIs is not given the https host as its sector', async () => {
    const app = await registerClient(running, 'plain', {
      application_type: 'native',
      subject_type: 'pairwise',
      redirect_uris: ['https://shop.example/cb', 'com.attacker.app://shop.example/cb'],
    });
    expect(await subAt(app.metadata, 'com.attacker.app://shop.example/cb')).not.toBe(pairwiseSubOf('https://shop.example/cb'));
  });

  it("an update cannot add such a redirect URI to a native app on the victim's https host", async () => {
    const app = await registerClient(running, 'plain', { application_type: 'native', redirect_uris: ['https://mail.example/cb'] });
    const { registration_access_token: token, registration_client_uri: uri, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = app.metadata as Record<string, unknown>;
    const res = await manage(uri as string, 'PUT', token as string, { ...metadata, redirect_uris: ['https://mail.example/cb', 'com.attacker.app://mail.example/cb'] });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_redirect_uri']);
    expect(res.body.error_description).toMatch(/sector is fixed/);
  });

  it('honest: a native app on a claimed https redirect URI keeps that host as its sector', async () => {
    const app = await registerClient(running, 'plain', { application_type: 'native', redirect_uris: ['https://app.rp.example/cb', 'https://app.rp.example/other'] });
    expect(await subAt(app.metadata, 'https://app.rp.example/other')).toBe(pairwiseSubOf('https://app.rp.example/cb'));
  });
});

describe('a sector document cannot group a redirect URI that names no relying party (C12.12, RFC 8252 7.1, 7.3)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), properties: { 'svc.fetch.allow-private-network': true } });
  let docs: HttpsDocServer;
  let distrust = (): void => undefined;
  const asked: string[] = [];
  // The relying party's sector document groups its web site with its desktop and mobile apps.
  const documents = new Map([['/rp/sector.json', ['https://www.rp.example/cb', 'https://app.rp.example/cb', 'http://127.0.0.1/callback', 'com.rp.app:/cb']]]);
  const SECTOR = '/rp/sector.json';
  beforeAll(async () => {
    docs = await startDocServer('https');
    distrust = trustForOutboundFetch(docs.ca);
    docs.handler = (req, res) => {
      asked.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(documents.get(req.url ?? '') ?? []));
    };
  });
  afterAll(async () => {
    distrust();
    await docs.close();
  });
  const subAt = async (client: ClientMetadata, redirect: string): Promise<string> =>
    (await runCodeFlow(running.issuer, { ...client, redirect_uris: [redirect] }, { skipUserinfo: true })).claims.sub;
  const inSector = (redirects: string[], extra: Record<string, unknown> = {}) =>
    registerClient(running, 'plain', { redirect_uris: redirects, sector_identifier_uri: `${docs.url}${SECTOR}`, ...extra });

  it("an unrelated app naming the document with its loopback or private-use redirect URI is refused, the document never asked, nothing stored (it would receive codes in the sector at its own port or scheme)", async () => {
    for (const [redirects, subjectType] of [[['http://127.0.0.1/callback'], undefined], [['com.rp.app:/cb'], 'pairwise'], [['https://app.rp.example/cb', 'http://127.0.0.1/callback'], undefined]] as const) {
      const token = (await issueInitialAccessToken(running.app.svc.provider)).token;
      asked.length = 0;
      const res = await register(running, { application_type: 'native', client_name: 'Another app', redirect_uris: redirects, subject_type: subjectType, sector_identifier_uri: `${docs.url}${SECTOR}` }, token);
      expect([res.status, res.body.error]).toEqual([400, 'invalid_client_metadata']);
      expect(res.body.error_description).toMatch(/^sector_identifier_uri: cannot group .*names no relying party/);
      expect(asked).toEqual([]);
      expect(await isUnspent(running, token)).toBe(true);
    }
  });

  it('an update cannot add such a redirect URI to a client of the sector', async () => {
    const app = await inSector(['https://app.rp.example/cb'], { application_type: 'native' });
    const { registration_access_token: token, registration_client_uri: uri, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = app.metadata as Record<string, unknown>;
    for (const method of ['PUT', 'POST'] as const) {
      const res = await manage(uri as string, method, token as string, { ...metadata, redirect_uris: ['https://app.rp.example/cb', 'http://127.0.0.1/callback'] });
      expect([res.status, res.body.error]).toEqual([400, 'invalid_client_metadata']);
      expect(res.body.error_description).toMatch(/^sector_identifier_uri: cannot group http:\/\/127\.0\.0\.1\/callback/);
    }
    expect(((await running.app.svc.store.adapter('Client').find(String(app.metadata.client_id))) as ClientMetadata).redirect_uris).toEqual(['https://app.rp.example/cb']);
  });

  it("honest: the relying party's web site and its app on a claimed https redirect URI share one sub through the document; a loopback app without it is a sector of its own", async () => {
    const web = await inSector(['https://www.rp.example/cb']);
    const app = await inSector(['https://app.rp.example/cb'], { application_type: 'native' });
    const desktop = await registerClient(running, 'plain', { application_type: 'native', redirect_uris: ['http://127.0.0.1/callback'] });
    const sub = await subAt(web.metadata, 'https://www.rp.example/cb');
    expect(await subAt(app.metadata, 'https://app.rp.example/cb')).toBe(sub);
    expect(await subAt(desktop.metadata, 'http://127.0.0.1/callback')).not.toBe(sub);
  });

  it('honest: a public client may name the document with a loopback redirect URI (its sub is the account id whatever its sector)', async () => {
    const app = await inSector(['http://127.0.0.1/callback'], { application_type: 'native', subject_type: 'public' });
    expect(await subAt(app.metadata, 'http://127.0.0.1/callback')).toBe('demo-0001');
  });
});
