import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createPlainServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Browser, BrowserContext } from 'playwright-core';

import { MAX_REQUEST_HEAD_BYTES } from '../../lib/index.js';
import { launchChromium, launchChromiumAllowingThirdPartyCookies } from './chromium.js';

/**
 * The made-up names a test serves over https on 127.0.0.1: the provider's site (`*.svc.test`, where a sibling
 * subdomain lives too) and a relying party's, another site (`*.rp.test`).
 */
const NAMES = ['*.svc.test', '*.rp.test'];

/** A self-signed certificate for {@link NAMES}, made with Debian's openssl, and the SPKI pin Chromium trusts it by. */
export interface TestCertificate {
  key: Buffer;
  cert: Buffer;
  /** base64 SHA-256 of its SubjectPublicKeyInfo (`--ignore-certificate-errors-spki-list`). */
  spki: string;
}

/** Makes a {@link TestCertificate} in a temporary directory it removes. */
export function makeCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'svc-https-sites-'));
  try {
    const san = NAMES.map((name) => `DNS:${name}`).join(',');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-subj', '/CN=svc.test', '-days', '1', '-addext', `subjectAltName=${san}`], { cwd: dir, stdio: 'ignore' });
    const cert = readFileSync(join(dir, 'cert.pem'));
    const spkiDer = new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' });
    return { key: readFileSync(join(dir, 'key.pem')), cert, spki: createHash('sha256').update(spkiDer).digest('base64') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A server on a free loopback port, its handler set once the test knows what to answer. */
export interface Site {
  port: number;
  /** `https://{name}:{port}` (or `http://`), as Chromium reaches it. */
  origin: string;
  serve(handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

/** Serves `name` over https with `certificate` (over plain http without one), as svc-connect's bundled server reads request heads. */
export async function startSite(name: string, certificate?: TestCertificate): Promise<Site> {
  let handler: RequestListener = (_req, res) => void res.end();
  const listener: RequestListener = (req, res) => handler(req, res);
  const options = { maxHeaderSize: MAX_REQUEST_HEAD_BYTES };
  const server: Server = certificate ? createTlsServer({ ...options, key: certificate.key, cert: certificate.cert }, listener) : createPlainServer(options, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `${certificate ? 'https' : 'http'}://${name}:${port}`,
    serve(next) {
      handler = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The flags that make Chromium resolve {@link NAMES} to 127.0.0.1 and trust `certificate` for them. */
const siteFlags = (certificate: TestCertificate): string[] => [`--host-resolver-rules=${NAMES.map((name) => `MAP ${name} 127.0.0.1`).join(', ')}`, `--ignore-certificate-errors-spki-list=${certificate.spki}`];

/** Chromium resolving {@link NAMES} to 127.0.0.1 and trusting `certificate` for them, without certificate errors. */
export function launchChromiumFor(certificate: TestCertificate): Promise<Browser> {
  return launchChromium(siteFlags(certificate));
}

/** {@link launchChromiumFor} on a profile that lets third-party cookies through ({@link launchChromiumAllowingThirdPartyCookies}). */
export function launchChromiumAllowingThirdPartyCookiesFor(certificate: TestCertificate): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  return launchChromiumAllowingThirdPartyCookies(siteFlags(certificate));
}
