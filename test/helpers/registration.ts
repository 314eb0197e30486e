import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { JWK } from 'jose';

import { outboundAgents } from '../../lib/net/agents.js';
import type { RunningApp } from './app.js';
import { rpKeyPair } from './rp-keys.js';

/** An HTTP answer of {@link register}. */
export interface HttpResult {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function asResult(response: Response): Promise<HttpResult> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** POSTs a registration body (object or raw text) with a Bearer token. */
export async function register(running: RunningApp, body: unknown, token?: string): Promise<HttpResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  return asResult(
    await fetch(`${running.issuer}/register`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) }),
  );
}

/**
 * True while an initial access token is in the store and unspent (a request that used it marks it
 * consumed): a refusal must leave it so. Checked in the store, so no test needs to spend the token
 * to show it, and tests sharing one need no order.
 */
export async function isUnspent(running: RunningApp, token: string): Promise<boolean> {
  const stored = await running.app.svc.store.adapter('InitialAccessToken').find(token);
  return stored !== undefined && (stored.consumed as unknown) === undefined;
}

/** Calls the client configuration endpoint. */
export async function manage(url: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', token: string, body?: unknown): Promise<HttpResult> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return asResult(await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
}

/** An encryption key pair for a relying party, from the run's pool ({@link rpKeyPair}): the private key and its public JWK. */
export async function encryptionKey(alg: 'RSA-OAEP-256' | 'RSA-OAEP' | 'ECDH-ES+A256KW' | 'ECDH-ES', extra: Partial<JWK> = {}): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { privateKey, publicJwk } = await rpKeyPair(alg);
  return { privateKey, jwk: { ...publicJwk, use: 'enc', kid: `enc-${alg}`, ...extra } };
}

/** A tiny HTTP server whose handler the test sets; for jwks_uri and x5u. */
export interface DocServer {
  url: string;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

/** An https {@link DocServer} on 127.0.0.1 with a self-signed certificate (for `sector_identifier_uri`, which must be https). */
export interface HttpsDocServer extends DocServer {
  /** PEM of the server's certificate: trust it ({@link trustForOutboundFetch}) to reach it. */
  ca: string;
}

/** Starts a {@link DocServer} on 127.0.0.1; `https` adds a self-signed certificate for IP 127.0.0.1. */
export async function startDocServer(): Promise<DocServer>;
export async function startDocServer(scheme: 'https'): Promise<HttpsDocServer>;
export async function startDocServer(scheme: 'http' | 'https' = 'http'): Promise<DocServer | HttpsDocServer> {
  if (scheme === 'https') return startHttpsDocServer();
  const doc: DocServer = {
    url: '',
    handler: (_req, res) => res.end(),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const server: Server = createServer((req, res) => doc.handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  doc.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return doc;
}

async function startHttpsDocServer(): Promise<HttpsDocServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-doc-tls-'));
  let key: Buffer;
  let ca: string;
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-subj', '/CN=127.0.0.1', '-days', '1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:keys.test,DNS:*.keys.test'], { cwd: dir, stdio: 'ignore' });
    key = readFileSync(join(dir, 'key.pem'));
    ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const doc: HttpsDocServer = {
    url: '',
    ca,
    handler: (_req, res) => res.end(),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const server = createHttpsServer({ key, cert: ca }, (req, res) => doc.handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  doc.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return doc;
}

/** A certificate chain made with Debian's openssl: leaf (for an RSA encryption key) and its CA. */
export interface CertificateChain {
  /** Public JWK of the leaf key (use=enc). */
  jwk: JWK;
  leafPem: string;
  caPem: string;
  /** base64 DER, leaf first, for `x5c`. */
  x5c: string[];
  /** A self-signed certificate of another key, for mismatch tests. */
  otherPem: string;
}

function der(pem: string): string {
  return new X509Certificate(pem).raw.toString('base64');
}

/** Generates a CA, a leaf certificate for a fresh RSA key, and an unrelated self-signed one. */
export function makeCertificateChain(): CertificateChain {
  const dir = mkdtempSync(join(tmpdir(), 'svc-certs-'));
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  };
  try {
    run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=svc test CA', '-days', '2',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
    run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'leaf.key');
    run('req', '-new', '-key', 'leaf.key', '-subj', '/CN=relying party', '-out', 'leaf.csr');
    run('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '1');
    run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other.key', '-out', 'other.pem', '-subj', '/CN=someone else', '-days', '2');
    const leafPem = readFileSync(join(dir, 'leaf.pem'), 'utf8');
    const caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
    const otherPem = readFileSync(join(dir, 'other.pem'), 'utf8');
    const jwk = { ...(createPublicKey(readFileSync(join(dir, 'leaf.key'), 'utf8')).export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'cert-key' };
    return { jwk, leafPem, caPem, x5c: [der(leafPem), der(caPem)], otherPem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Trusts `pem` for https requests that name no CA of their own (the app's outbound fetch), the way
 * an operator's system trust store would; returns the undo. The https agent's options override a
 * request's own, so the undo deletes what it set rather than leaving `ca: undefined` behind (which
 * would void the `ca` other tests pass).
 */
export function trustForOutboundFetch(pem: string): () => void {
  const { options } = outboundAgents.https;
  const had = Object.prototype.hasOwnProperty.call(options, 'ca');
  const saved = options.ca;
  options.ca = pem;
  return () => {
    if (had) options.ca = saved;
    else delete options.ca;
  };
}

/** A fetch of a {@link KeySetServer} path held by the test: `arrived` when it comes in, `release()` answers it. */
export interface HeldFetch {
  arrived: Promise<void>;
  release: () => void;
}

/** Relying parties' key sets by path (`jwks_uri`), each answered `no-store`; a fetch of a path given to `hold` waits. */
export interface KeySetServer {
  url: string;
  sets: Map<string, JWK[]>;
  /** Holds the next fetch of `where` (no sleeps: the test learns it arrived and answers it when it likes). */
  hold(where: string): HeldFetch;
  /** Forgets a hold no fetch came for. */
  unhold(where: string): void;
  close(): Promise<void>;
}

/** Starts a {@link KeySetServer} on 127.0.0.1. */
export async function startKeySetServer(): Promise<KeySetServer> {
  const doc = await startDocServer();
  const sets = new Map<string, JWK[]>();
  const holds = new Map<string, { arrived: () => void; answer: Promise<void> }>();
  doc.handler = (req, res) => {
    const url = req.url ?? '';
    const send = (): void => void res.setHeader('content-type', 'application/json').setHeader('cache-control', 'no-cache, no-store').end(JSON.stringify({ keys: sets.get(url) ?? [] }));
    const held = holds.get(url);
    if (!held) return send();
    holds.delete(url);
    held.arrived();
    void held.answer.then(send);
  };
  return {
    url: doc.url,
    sets,
    hold(where) {
      let arrived!: () => void;
      let release!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      holds.set(where, { arrived, answer: new Promise<void>((resolve) => (release = resolve)) });
      return { arrived: arrival, release };
    },
    unhold: (where) => void holds.delete(where),
    close: () => doc.close(),
  };
}
