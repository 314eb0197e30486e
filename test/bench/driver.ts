/**
 * The load driver, in its own process: complete flows (authorization with PKCE → login → consent →
 * code exchange → UserInfo) at a fixed concurrency for a fixed duration after a warm-up, or
 * registrations. Prints a DriverResult as JSON. Settings in BENCH_DRIVER (JSON).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, type DriverResult } from './common.js';

interface DriverSpec {
  mode: 'flow' | 'register';
  discoveryUrl: string;
  concurrency: number;
  warmupSeconds: number;
  seconds: number;
  login: string;
  password: string;
  scope: string;
  registrationBody?: unknown;
  iatFile?: string;
  /** Development aid (`trace.ts`): before each step, an ECHO naming it on this Redis (seen by MONITOR). */
  traceRedis?: string;
}

const spec = JSON.parse(process.env.BENCH_DRIVER ?? '{}') as DriverSpec;
const discovery = (await (await fetch(spec.discoveryUrl)).json()) as Record<string, string>;
const authorizePath = new URL(discovery.authorization_endpoint as string).pathname;
const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;

const latencies: Record<string, number[]> = {};
let measuring = false;
const tracer = spec.traceRedis ? new (await import('ioredis')).Redis(spec.traceRedis) : undefined;
const time = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
  if (tracer) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await tracer.echo(`step ${step}`);
  }
  const started = performance.now();
  const result = await fn();
  if (measuring) (latencies[step] ??= []).push(performance.now() - started);
  return result;
};

class Jar {
  private readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (!pair || eq < 0) continue;
      const value = pair.slice(eq + 1);
      if (!value || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(pair.slice(0, eq));
      else this.cookies.set(pair.slice(0, eq), value);
    }
  }
}

function stepOf(method: string, url: URL, isLogin: boolean): string {
  if (method === 'POST') return isLogin ? 'login_submit' : 'consent_submit';
  if (url.pathname === authorizePath) return 'authorize';
  if (url.pathname.startsWith(`${authorizePath}/`)) return 'authorize_resume';
  return 'interaction_page';
}

async function oneFlow(): Promise<void> {
  const jar = new Jar();
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(discovery.authorization_endpoint as string);
  for (const [k, v] of Object.entries({
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: spec.scope,
    state: randomBytes(8).toString('base64url'),
    nonce: randomBytes(8).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })) {
    url.searchParams.set(k, v);
  }
  let next: { url: URL; method: string; body?: string; isLogin: boolean } = { url, method: 'GET', isLogin: false };
  let code: string | undefined;
  for (let hop = 0; hop < 12 && !code; hop += 1) {
    const current = next;
    const response = await time(stepOf(current.method, current.url, current.isLogin), () =>
      fetch(current.url, {
        method: current.method,
        redirect: 'manual',
        headers: { cookie: jar.header(), ...(current.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        body: current.body,
      }),
    );
    jar.take(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const target = new URL(location, current.url);
      await response.arrayBuffer();
      if (target.href.startsWith(REDIRECT_URI)) {
        code = target.searchParams.get('code') ?? undefined;
        if (!code) throw new Error(`no code: ${target.search}`);
        break;
      }
      next = { url: target, method: 'GET', isLogin: false };
      continue;
    }
    const html = await response.text();
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
    if (!form?.[1]) throw new Error(`unexpected page ${response.status}: ${html.slice(0, 120)}`);
    const fields = new URLSearchParams();
    for (const input of (form[2] ?? '').matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields.set(input[1] as string, input[2] as string);
    const isLogin = /name="login"/.test(html);
    if (isLogin) {
      fields.set('login', spec.login);
      fields.set('password', spec.password);
    }
    next = { url: new URL(form[1].replace(/&amp;/g, '&'), current.url), method: 'POST', body: fields.toString(), isLogin };
  }
  if (!code) throw new Error('flow did not end in a code');
  const tokenResponse = await time('token', () =>
    fetch(discovery.token_endpoint as string, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code, code_verifier: verifier, redirect_uri: REDIRECT_URI }).toString(),
    }),
  );
  const tokens = (await tokenResponse.json()) as { access_token?: string; id_token?: string; error?: string };
  if (!tokens.access_token || tokens.id_token?.split('.').length !== 5) throw new Error(`token: ${tokens.error ?? 'no encrypted id_token'}`);
  const userinfo = await time('userinfo', () => fetch(discovery.userinfo_endpoint as string, { headers: { authorization: `Bearer ${tokens.access_token}` } }));
  const body = await userinfo.text();
  if (userinfo.status !== 200 || body.split('.').length !== 5) throw new Error(`userinfo ${userinfo.status}`);
}

/** The driver ran out of initial access tokens: the run ends there (not an error). */
class Exhausted extends Error {}

let tokens: string[] = [];
let tokenIndex = 0;
async function oneRegistration(): Promise<void> {
  const token = tokens[tokenIndex++];
  if (!token) throw new Exhausted();
  const response = await time('register', () =>
    fetch(discovery.registration_endpoint as string, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(spec.registrationBody),
    }),
  );
  const body = await response.text();
  if (response.status !== 201) throw new Error(`register ${response.status}: ${body.slice(0, 200)}`);
}

if (spec.mode === 'register') tokens = JSON.parse(readFileSync(spec.iatFile as string, 'utf8')) as string[];
const work = spec.mode === 'flow' ? oneFlow : oneRegistration;
let flows = 0;
let errors = 0;
let firstError: string | undefined;
const warmupEnd = Date.now() + spec.warmupSeconds * 1000;
const end = warmupEnd + spec.seconds * 1000;
let measuredStart = 0;
let measuredEnd = 0;
let exhausted = false;
await Promise.all(
  Array.from({ length: spec.concurrency }, async () => {
    while (Date.now() < end && !exhausted) {
      if (!measuring && Date.now() >= warmupEnd) {
        measuring = true;
        measuredStart = performance.now();
      }
      const counted = measuring;
      try {
        await work();
        if (counted) flows += 1;
      } catch (err) {
        if (err instanceof Exhausted) {
          exhausted = true;
          break;
        }
        if (counted) errors += 1;
        firstError ??= (err as Error).message;
      }
      measuredEnd = performance.now();
    }
  }),
);
tracer?.disconnect();
const result: DriverResult = { flows, errors, seconds: (measuredEnd - measuredStart) / 1000, latencies, firstError };
process.stdout.write(`${JSON.stringify(result)}\n`);
