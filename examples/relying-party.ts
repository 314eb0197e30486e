/**
 * A relying party from scratch (docs/relying-party.md): make an encryption key pair, register with
 * an initial access token, run the code flow with PKCE, and decrypt the ID token and UserInfo with
 * openid-client. Run it: `SVC_ISSUER=http://localhost:3000/oidc/v1 SVC_INITIAL_ACCESS_TOKEN=… npx tsx
 * examples/relying-party.ts`, open the printed URL, sign in, and paste the URL you land on.
 */
import { createInterface } from 'node:readline/promises';

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

if (isMainModule(import.meta.url)) {
  const issuer = process.env.SVC_ISSUER ?? 'http://localhost:3000/oidc/v1';
  const initialAccessToken = process.env.SVC_INITIAL_ACCESS_TOKEN;
  if (!initialAccessToken) {
    process.stderr.write('set SVC_INITIAL_ACCESS_TOKEN (from an invitation mail or `svc-connect invite`)\n');
    process.exit(2);
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  runRelyingParty({
    issuer,
    initialAccessToken,
    redirectUri: 'http://localhost:8080/callback',
    async authorize(url) {
      process.stdout.write(`Open this URL, sign in, and paste the address you land on (it will not load):\n${url.href}\n`);
      return new URL(await rl.question('> '));
    },
  })
    .then((result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`))
    .catch((err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    })
    .finally(() => rl.close());
}
