import type { HttpResult } from './registration.js';

/** Options of one management call: `auth: null` sends no Authorization; `from` fixes the client address. */
export interface ManagementCallOptions {
  auth?: string | null;
  headers?: Record<string, string>;
  body?: string;
  from?: string;
}

/**
 * Management requests to `app` with Authorization `auth` unless a call says otherwise, each from a
 * fresh client address (the lockout counts per address); the body is JSON, or `{ text }`.
 */
export function managementCalls(app: { readonly baseUrl: string }, auth: string): (method: string, path: string, options?: ManagementCallOptions) => Promise<HttpResult> {
  let ip = 0;
  return async (method, path, options = {}) => {
    ip += 1;
    const headers: Record<string, string> = { 'x-forwarded-for': options.from ?? `198.18.${Math.floor(ip / 250)}.${ip % 250}`, ...options.headers };
    if (options.auth !== null) headers.authorization = options.auth ?? auth;
    const response = await fetch(`${app.baseUrl}${path}`, { method, headers, body: options.body });
    const text = await response.text();
    const json = (response.headers.get('content-type') ?? '').includes('json');
    return { status: response.status, headers: response.headers, body: json && text ? (JSON.parse(text) as Record<string, unknown>) : { text } };
  };
}
