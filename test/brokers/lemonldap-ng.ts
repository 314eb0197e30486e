import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../helpers/processes.js';

/** Where the PKCE plugin lives (examples/brokers/lemonldap-ng), put on the portal's `@INC`. */
export const PLUGIN_DIR = new URL('../../examples/brokers/lemonldap-ng/', import.meta.url).pathname;

/** The installed LemonLDAP::NG: the portal module's version and the Debian package's. */
export function llngVersion(): { portal: string; debian: string } {
  const portal = execFileSync('perl', ['-MLemonldap::NG::Portal', '-e', 'print $Lemonldap::NG::Portal::VERSION'], { encoding: 'utf8' }).trim();
  const debian = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'liblemonldap-ng-portal-perl'], { encoding: 'utf8' }).trim();
  return { portal, debian };
}

/** svc-connect as LemonLDAP::NG sees it: copied metadata and the registered client. */
export interface ExternalProvider {
  /** The provider's discovery document, copied verbatim into the configuration. */
  discovery: Record<string, unknown>;
  /** The provider's JWKS, copied in (and refreshed from `jwks_uri` after `jwksTimeout` seconds). */
  jwks: unknown;
  clientId: string;
  clientSecret: string;
  /** `client_secret_basic` or `client_secret_post`, as registered. */
  tokenEndpointAuthMethod: string;
  scope: string;
  /** Session attribute → UserInfo claim. */
  exportedVars: Record<string, string>;
}

/** A LemonLDAP::NG portal under plackup with its private configuration in a temp folder. */
export interface LlngPortal {
  /** e.g. `http://127.0.0.1:41234/` (LemonLDAP::NG's `portal` setting). */
  url: string;
  /** Its callback URI, `<portal>?openidconnectcallback=1`. */
  callbackUri: string;
  /** Everything the portal wrote to stderr (its logger's output). */
  output(): string;
  close(): Promise<void>;
}

/** The portal's port and URL, known before the configuration is written (it carries the callback). */
export async function reservePortal(): Promise<{ port: number; url: string; callbackUri: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  return { port, url, callbackUri: `${url}?openidconnectcallback=1` };
}

const OP = 'svc';

/** What a test changes in the portal's configuration. */
export interface PortalOptions {
  /** The PKCE plugin's key (`customPluginsParams/svcConnectPkceKey`); `null` loads no plugin. Default: 32 random bytes. */
  pkceKey?: string | null;
}

/** LemonLDAP::NG's configuration (`lmConf-1.json`): svc-connect as its only authentication source. */
function configuration(dir: string, portalUrl: string, op: ExternalProvider, pkceKey: string | null): Record<string, unknown> {
  const storage = (name: string): Record<string, string> => {
    mkdirSync(join(dir, name, 'lock'), { recursive: true });
    return { Directory: join(dir, name), LockDirectory: join(dir, name, 'lock'), generateModule: 'Lemonldap::NG::Common::Apache::Session::Generate::SHA256' };
  };
  return {
    cfgNum: 1,
    cfgAuthor: 'svc-connect broker tier',
    cfgDate: Math.floor(Date.now() / 1000),
    key: randomBytes(24).toString('hex'),
    portal: portalUrl,
    // The portal's own host instead of the default example.com (the SSO cookie's Domain).
    domain: '127.0.0.1',
    securedCookie: 0,
    sameSite: 'Lax',
    trustedDomains: '',
    authentication: 'OpenIDConnect',
    userDB: 'Same',
    passwordDB: 'Null',
    registerDB: 'Null',
    whatToTrace: '_user',
    // The menu's "Connected as" shows the name that came from svc-connect.
    portalUserAttr: 'cn',
    exportedVars: {},
    // No protected application: the defaults' shape (`{ default: deny }`) is not a per-host map.
    locationRules: {},
    exportedHeaders: {},
    globalStorage: 'Apache::Session::File',
    globalStorageOptions: storage('sessions'),
    persistentStorage: 'Apache::Session::File',
    persistentStorageOptions: storage('psessions'),
    oidcOPMetaDataJSON: { [OP]: JSON.stringify(op.discovery) },
    oidcOPMetaDataJWKS: { [OP]: JSON.stringify(op.jwks) },
    oidcOPMetaDataOptions: {
      [OP]: {
        oidcOPMetaDataOptionsConfigurationURI: `${String(op.discovery.issuer)}/.well-known/openid-configuration`,
        oidcOPMetaDataOptionsJWKSTimeout: 86400,
        oidcOPMetaDataOptionsClientID: op.clientId,
        oidcOPMetaDataOptionsClientSecret: op.clientSecret,
        oidcOPMetaDataOptionsTokenEndpointAuthMethod: op.tokenEndpointAuthMethod,
        oidcOPMetaDataOptionsScope: op.scope,
        oidcOPMetaDataOptionsCheckJWTSignature: 1,
        oidcOPMetaDataOptionsUseNonce: 1,
        oidcOPMetaDataOptionsIDTokenMaxAge: 30,
        // Kept in the session so the test can show it carries no user data.
        oidcOPMetaDataOptionsStoreIDToken: 1,
        oidcOPMetaDataOptionsDisplayName: 'svc-connect',
      },
    },
    oidcOPMetaDataExportedVars: { [OP]: op.exportedVars },
    oidcRPCallbackGetParam: 'openidconnectcallback',
    ...(pkceKey === null ? {} : { customPlugins: 'SvcConnect::LLNG::Pkce', customPluginsParams: { svcConnectPkceKey: pkceKey } }),
    // The session API (`GET /session/my/global`) reads the signed-in user's own session.
    restSessionServer: 1,
    exportedAttr: `+ _user _oidc_OP _oidc_id_token idcard_family_name ${Object.keys(op.exportedVars).join(' ')}`,
    checkUser: 1,
    checkUserHiddenAttributes: '_loginHistory, _session_id, hGroups, _oidc_access_token, _oidc_refresh_token',
    // A flat attribute out of the structured svc.ver claim, for rules and headers.
    macros: { idcard_family_name: '$idcard->{family_name}' },
    notification: 0,
    portalDisplayAppslist: 1,
  };
}

/** `lemonldap-ng.ini`: a File configuration backend in `dir`, no cache, logs to stderr. */
function ini(dir: string): string {
  return [
    '[all]',
    'logger = Lemonldap::NG::Common::Logger::Std',
    'userLogger = Lemonldap::NG::Common::Logger::Std',
    `logLevel = ${process.env.LLNG_LOG_LEVEL ?? 'notice'}`,
    '[configuration]',
    'type = File',
    `dirName = ${join(dir, 'conf')}`,
    '[portal]',
    'staticPrefix = /static',
    'templateDir = /usr/share/lemonldap-ng/portal/templates',
    'languages = en',
    '',
  ].join('\n');
}

/** The portal's PSGI app with its static files, as Debian's web server setup would serve them. */
const PSGI = `use Plack::Builder;
use Lemonldap::NG::Portal::Main;
my $portal = Lemonldap::NG::Portal::Main->run({});
builder {
  enable 'Static', path => qr{^/static/}, root => '/usr/share/lemonldap-ng/portal/htdocs/';
  enable 'Static', path => sub { s{^/javascript/}{/} }, root => '/usr/share/javascript/';
  $portal;
};
`;

/**
 * Writes the configuration (before the portal starts: it caches it) and runs the portal under
 * plackup on `reserved.port`; resolves once it answers.
 */
export async function startPortal(reserved: { port: number; url: string; callbackUri: string }, op: ExternalProvider, options: PortalOptions = {}): Promise<LlngPortal> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-llng-'));
  mkdirSync(join(dir, 'conf'));
  const pkceKey = options.pkceKey === undefined ? randomBytes(32).toString('base64url') : options.pkceKey;
  writeFileSync(join(dir, 'conf', 'lmConf-1.json'), JSON.stringify(configuration(dir, reserved.url, op, pkceKey), null, 1), { mode: 0o600 });
  writeFileSync(join(dir, 'lemonldap-ng.ini'), ini(dir));
  writeFileSync(join(dir, 'portal.psgi'), PSGI);
  const child: ChildProcess = spawn('plackup', ['-I', PLUGIN_DIR, '--host', '127.0.0.1', '--port', String(reserved.port), '--no-default-middleware', join(dir, 'portal.psgi')], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LLNG_DEFAULTCONFFILE: join(dir, 'lemonldap-ng.ini') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPortal(reserved.url, () => child.exitCode !== null || child.signalCode !== null, () => out);
  } catch (error) {
    await close();
    throw error;
  }
  return { url: reserved.url, callbackUri: reserved.callbackUri, output: () => out, close };
}

async function waitForPortal(url: string, ended: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (ended()) throw new Error(`the LemonLDAP::NG portal ended before answering:\n${output()}`);
    try {
      const response = await fetch(url, { redirect: 'manual' });
      await response.arrayBuffer();
      if (response.status < 500) return;
      throw new Error(`the LemonLDAP::NG portal answers ${response.status}:\n${output()}`);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('the LemonLDAP::NG portal answers')) throw error;
    }
    if (Date.now() > deadline) throw new Error(`the LemonLDAP::NG portal did not answer within 30 s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
