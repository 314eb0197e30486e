/**
 * A minimal browser for driving the login and consent pages over real HTTP: a cookie jar, manual
 * redirects, and HTML form submission by form id.
 */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();

  /** The last HTML page received. */
  lastPage = '';

  /** Every `Set-Cookie` line received, in order. */
  readonly seenSetCookies: string[] = [];

  /** Sends a request with the jar's cookies; stores the response's cookies; never follows redirects. */
  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      this.seenSetCookies.push(line);
      this.store(line);
    }
    return response;
  }

  private store(line: string): void {
    const [pair, ...attributes] = line.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (!pair || eq < 0) return;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attributes.some((a) => {
      const [k, v] = a.split('=');
      return k?.trim().toLowerCase() === 'expires' && v !== undefined && Date.parse(v) < Date.now();
    });
    if (!value || expired) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }

  /** Forgets every cookie (a fresh browser). */
  clearCookies(): void {
    this.cookies.clear();
  }

  /**
   * Follows redirects from `url` while they stay on `origin`; returns the first response that is
   * not such a redirect, or the Location that leaves `origin`.
   */
  async follow(url: string, origin: string, init?: RequestInit): Promise<{ response?: Response; leftTo?: string }> {
    let response = await this.request(url, init);
    for (let hops = 0; hops < 20; hops += 1) {
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) {
        if ((response.headers.get('content-type') ?? '').includes('html')) this.lastPage = await response.clone().text();
        return { response };
      }
      const next = new URL(location, response.url || url).href;
      if (!next.startsWith(origin)) return { leftTo: next };
      response = await this.request(next);
    }
    throw new Error('too many redirects');
  }

  /** Finds form `#id` in the last page: its absolute action URL. */
  formAction(id: string, pageUrl: string): string {
    const match = new RegExp(`<form[^>]*id="${id}"[^>]*>`).exec(this.lastPage);
    const action = match ? /action="([^"]*)"/.exec(match[0])?.[1] : undefined;
    if (!action) throw new Error(`form #${id} not found on the page`);
    return new URL(action.replace(/&amp;/g, '&'), pageUrl).href;
  }

  /** Submits form `#id` of the last page with `fields`, following redirects on `origin`. */
  async submit(id: string, fields: Record<string, string>, origin: string): Promise<{ response?: Response; leftTo?: string }> {
    return this.follow(this.formAction(id, origin), origin, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams(fields).toString(),
    });
  }
}

/** Result of {@link signIn}: where the provider finally sent the browser. */
export interface SignInResult {
  /** The redirect to the client (carrying `code` or `error`). */
  callbackUrl: URL;
  browser: FormBrowser;
}

/**
 * Drives an authorization request through login and consent and returns the redirect to the
 * client. `consent: 'deny'` presses the deny form.
 */
export async function signIn(
  authorizationUrl: string,
  options: { login?: string; password?: string; consent?: 'allow' | 'deny'; browser?: FormBrowser } = {},
): Promise<SignInResult> {
  const browser = options.browser ?? new FormBrowser();
  const origin = new URL(authorizationUrl).origin;
  let step = await browser.follow(authorizationUrl, origin);
  for (let pages = 0; pages < 4 && !step.leftTo; pages += 1) {
    const page = browser.lastPage;
    if (page.includes('id="login-form"')) {
      step = await browser.submit('login-form', { login: options.login ?? 'demo', password: options.password ?? 'demo' }, origin);
    } else if (page.includes('id="consent-allow"')) {
      step = await browser.submit(options.consent === 'deny' ? 'consent-deny' : 'consent-allow', {}, origin);
    } else {
      throw new Error(`unexpected page (status ${step.response?.status}): ${page.slice(0, 300)}`);
    }
  }
  if (!step.leftTo) throw new Error('the provider never redirected back to the client');
  return { callbackUrl: new URL(step.leftTo), browser };
}
