/**
 * A relying party from scratch (docs/relying-party.md): make an encryption key pair, register with
 * an initial access token, run the code flow with PKCE, and decrypt the ID token and UserInfo with
 * openid-client. Run it: `SVC_INITIAL_ACCESS_TOKEN=… npx tsx examples/relying-party.ts` (optional:
 * `SVC_ISSUER`, default `http://localhost:3000/oidc/v1`; `SVC_REDIRECT_URI`, default
 * `http://localhost:8080/callback`), open the printed URL and sign in: the example listens on the
 * redirect URI and finishes by itself. When it cannot listen there, paste the address you land on.
 */
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';

import { exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';

import { isMainModule } from '../lib/is-main.js';

/** What the relying party needs. */
export interface RelyingPartyOptions {
  /** The provider's issuer, e.g. `http://localhost:3000/oidc/v1`. */
  issuer: string;
  /** An initial access token (from an invitation mail, or `issueInitialAccessToken`). */
  initialAccessToken: string;
  /** Where the provider sends the browser back. */
  redirectUri: string;
  /** Scopes beyond `openid`. */
  scope?: string;
  /** Sends a person's browser to `url` and resolves with the URL the provider redirected back to. */
  authorize(url: URL): Promise<URL>;
}

/** What the relying party received, decrypted and verified. */
export interface RelyingPartyResult {
  clientId: string;
  idTokenClaims: oidc.IDToken;
  userinfo: oidc.UserInfoResponse;
}

/** Registers, runs one flow and returns the decrypted, verified claims. */
export async function runRelyingParty(options: RelyingPartyOptions): Promise<RelyingPartyResult> {
  // 1. An encryption key pair: the provider encrypts ID tokens and UserInfo to the public key.
  const { publicKey, privateKey } = await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048 });
  const kid = 'rp-enc-1';
  const jwk = { ...(await exportJWK(publicKey)), use: 'enc', kid };

  // 2. Register with the initial access token (it works once).
  const allowHttp = options.issuer.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : {};
  const config = await oidc.dynamicClientRegistration(
    new URL(options.issuer),
    {
      redirect_uris: [options.redirectUri],
      client_name: 'Example relying party',
      id_token_encrypted_response_alg: 'RSA-OAEP-256',
      userinfo_encrypted_response_alg: 'RSA-OAEP-256',
      jwks: { keys: [jwk] },
    },
    undefined,
    { initialAccessToken: options.initialAccessToken, ...allowHttp },
  );
  oidc.enableDecryptingResponses(config, undefined, { key: privateKey, kid });

  // 3. The code flow with PKCE (S256).
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: options.redirectUri,
    scope: `openid ${options.scope ?? 'profile email'}`.trim(),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
  });
  const callback = await options.authorize(url);

  // 4. Redeem the code; openid-client decrypts and verifies the ID token and the UserInfo JWT.
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
  const idTokenClaims = tokens.claims() as oidc.IDToken;
  const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idTokenClaims.sub);
  return { clientId: config.clientMetadata().client_id, idTokenClaims, userinfo };
}

/** A local HTTP server on the redirect URI's host and port: resolves with the first callback it receives. */
async function listenForCallback(redirectUri: URL): Promise<{ callback: Promise<URL>; server: Server } | undefined> {
  if (redirectUri.protocol !== 'http:') return undefined;
  let resolveCallback: (url: URL) => void = () => undefined;
  const callback = new Promise<URL>((resolve) => (resolveCallback = resolve));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', redirectUri);
    if (url.pathname !== redirectUri.pathname) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Signed in: the relying party example finishes in your terminal. You can close this page.\n');
    resolveCallback(url);
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    // localhost: every loopback family (no host), as a browser may try ::1 or 127.0.0.1.
    const host = redirectUri.hostname === 'localhost' ? undefined : redirectUri.hostname.replace(/^\[|\]$/g, '');
    server.listen(Number(redirectUri.port || 80), host, () => resolve(true));
  });
  return listening ? { callback, server } : undefined;
}

/** Reads the pasted callback address; rejects when standard input closes first. */
function pastedCallback(): { callback: Promise<URL>; close(): void } {
  const rl = createInterface({ input: process.stdin });
  const callback = new Promise<URL>((resolve, reject) => {
    rl.once('line', (text) => {
      const line = text.trim();
      if (URL.canParse(line)) resolve(new URL(line));
      else reject(new Error(`not an address: ${line.slice(0, 80)}`));
    });
    rl.once('close', () => reject(new Error('standard input closed before the callback address was pasted')));
  });
  return { callback, close: () => rl.close() };
}

/** `npx tsx examples/relying-party.ts` (docs/relying-party.md). */
async function main(): Promise<void> {
  const issuer = process.env.SVC_ISSUER ?? 'http://localhost:3000/oidc/v1';
  const initialAccessToken = process.env.SVC_INITIAL_ACCESS_TOKEN;
  const redirectUri = new URL(process.env.SVC_REDIRECT_URI ?? 'http://localhost:8080/callback');
  if (!initialAccessToken) {
    process.stderr.write('set SVC_INITIAL_ACCESS_TOKEN (from an invitation mail or `svc-connect invite`)\n');
    process.exit(2);
  }
  // Decide how the callback arrives before the one-use token is spent.
  const listener = await listenForCallback(redirectUri);
  if (!listener && !process.stdin.isTTY) {
    process.stderr.write(`cannot listen on ${redirectUri.host} for the callback, and standard input is not a terminal to paste it into; free that port or set SVC_REDIRECT_URI (the token is still unused)\n`);
    process.exit(2);
  }
  const paste = listener ? undefined : pastedCallback();
  let clientId = '';
  try {
    const result = await runRelyingParty({
      issuer,
      initialAccessToken,
      redirectUri: redirectUri.href,
      async authorize(url) {
        process.stdout.write(
          listener
            ? `Open this URL and sign in (as demo/demo on the example server); this example listens on ${redirectUri.href}:\n${url.href}\n`
            : `Open this URL, sign in, and paste the address you land on (it will not load):\n${url.href}\n> `,
        );
        clientId = url.searchParams.get('client_id') ?? '';
        return (listener ?? paste)?.callback as Promise<URL>;
      },
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (err) {
    const spent = clientId ? ` (client ${clientId} is registered and the initial access token is spent: ask for a new one to start again)` : '';
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}${spent}\n`);
    process.exitCode = 1;
  } finally {
    paste?.close();
    listener?.server.closeAllConnections();
    listener?.server.close();
  }
}

if (isMainModule(import.meta.url)) {
  void main();
}
