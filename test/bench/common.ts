/**
 * Shared set-up of the benchmark (`npm run bench`): the relying party both servers know, and how
 * the servers are told what to run.
 */
import type { ClientMetadata } from 'oidc-provider';
import type { JWK } from 'jose';

/** The bench client's redirect URI (never loaded: the driver reads the code from the redirect). */
export const REDIRECT_URI = 'https://rp.bench.example/cb';
export const CLIENT_ID = 'bench-rp';
export const CLIENT_SECRET = 'bench-rp-secret-0123456789-0123456789-0123456789';

/** The statically registered client: encrypted ID token and UserInfo (RSA-OAEP-256, A128CBC-HS256), signed `alg`. */
export function benchClient(encryptionJwk: JWK, signingAlg: 'RS256' | 'ES256'): ClientMetadata {
  return {
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: signingAlg,
    id_token_encrypted_response_alg: 'RSA-OAEP-256',
    id_token_encrypted_response_enc: 'A128CBC-HS256',
    userinfo_signed_response_alg: signingAlg,
    userinfo_encrypted_response_alg: 'RSA-OAEP-256',
    userinfo_encrypted_response_enc: 'A128CBC-HS256',
    jwks: { keys: [encryptionJwk] },
  };
}

/** What a bench server process is told through the environment (JSON in BENCH_SERVER). */
export interface ServerSpec {
  port: number;
  /** Provider signing keys (private JWKS). */
  jwks: { keys: JWK[] };
  /** The RP's public encryption key. */
  encryptionJwk: JWK;
  signingAlg: 'RS256' | 'ES256';
  /** Redis URL, or undefined for the embedded store. */
  redisUrl?: string;
  keyPrefix: string;
  cookieKey: string;
  /** Vanilla server only: oidc-provider's own memory adapter or the plain Redis adapter (`builtin`), or svc-connect's (`ours`). */
  adapter?: 'builtin' | 'ours';
  /** Issue this many initial access tokens at start and write them to `iatFile`. */
  iats?: number;
  iatFile?: string;
}

/** The driver's JSON result. */
export interface DriverResult {
  flows: number;
  errors: number;
  seconds: number;
  /** Latencies in ms by step. */
  latencies: Record<string, number[]>;
  firstError?: string;
}

/** A percentile of a sample (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}
