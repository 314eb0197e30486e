import { isLoopbackHost } from '../net/addresses.js';
import { clip } from '../terminal-text.js';
import { escapeHtml, renderPage, type RenderedPage } from './html.js';
import { SEEN_GATE_ATTRIBUTE, SEEN_GATE_HINT, SEEN_GATE_SCRIPT } from './seen-gate.js';

/** What the login page needs to know. */
export interface LoginPageModel {
  action: string;
  /** The name the client registered, or its id. */
  clientName: string;
  failed?: boolean;
  /** Her authenticator failed (threw, or gave no answer in time): counted as a failed attempt, and said so. */
  fault?: boolean;
  /** The login the person typed (re-filled after a failure). */
  login?: string;
  /** `form-action` sources for the client's redirect URI (`formTargetsOf` in html.ts). */
  redirectTargets?: string[];
  /** Sign-ins are throttled: seconds until the next attempt is accepted. */
  retryAfterSeconds?: number;
}

/** The longest client name shown whole: a longer one is cut, so it cannot push the page's own words out of sight. */
const NAME_SHOWN = 80;

const shownName = (name: string): string => clip(name, NAME_SHOWN);

/** The error line of the login page: wrong credentials, or too many attempts and when to retry. */
function loginMessage(model: LoginPageModel): string {
  if (model.retryAfterSeconds) {
    const at = new Date(Date.now() + model.retryAfterSeconds * 1000).toISOString().slice(11, 19);
    const wait = model.retryAfterSeconds < 120 ? `${model.retryAfterSeconds} seconds` : `${Math.ceil(model.retryAfterSeconds / 60)} minutes`;
    return `<p class="error" role="alert" id="login-error" data-retry-after="${model.retryAfterSeconds}">Too many failed sign-ins. Try again in ${wait} (after ${at} UTC).</p>`;
  }
  if (model.fault) return '<p class="error" role="alert" id="login-error">Something went wrong while signing you in. Try again, or start again from the application. Error: <code>server_error</code></p>';
  return model.failed ? '<p class="error" role="alert" id="login-error">The login or password is not correct.</p>' : '';
}

/**
 * The login page (C8): form `#login-form` with inputs `login` and `password`. Shown again with her login filled in,
 * the cursor waits in the password field: typed into the login field, her password would be shown and sent as a name.
 * Both fields are described by the error line, so a screen reader names it in whichever field she is.
 */
export function loginPage(model: LoginPageModel): RenderedPage {
  const [loginFocus, passwordFocus] = model.login ? ['', ' autofocus'] : [' autofocus', ''];
  const described = model.failed || model.fault || model.retryAfterSeconds ? ' aria-describedby="login-error"' : '';
  return renderPage({
    title: 'Sign in',
    formTargets: model.redirectTargets,
    body: `<h1>Sign in</h1>
<p>to continue to <strong><bdi>${escapeHtml(shownName(model.clientName))}</bdi></strong></p>
${loginMessage(model)}
<form id="login-form" method="post" action="${escapeHtml(model.action)}" autocomplete="on">
<label for="login">Login</label>
<input id="login" name="login" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required${loginFocus} value="${escapeHtml(model.login ?? '')}"${described}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${passwordFocus}${described}>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`,
  });
}

/** What the consent page needs to know. */
export interface ConsentPageModel {
  allowAction: string;
  denyAction: string;
  clientName: string;
  /** The redirect URI her answer is sent to. */
  redirectUri: string;
  /** What is asked for, in plain words, and where each travels. */
  items: { text: string; essential: boolean; channels: ('id_token' | 'userinfo')[] }[];
  channels: { idToken: ChannelMode; userinfo: ChannelMode };
  /** The delivery as shown (`deliveryText`), sent back with the approval so a changed registration is not approved unseen. */
  delivery: string;
  /** `form-action` sources for the client's redirect URI (`formTargetsOf` in html.ts). */
  redirectTargets?: string[];
  /** The client's `sub` is her account id (`subject_type` public), the same for every such client. */
  sharedSubject?: boolean;
}

/** How a channel treats personal data. */
export type ChannelMode = 'encrypted' | 'unencrypted' | 'withheld';

const CHANNEL_WORDS: Record<ChannelMode, string> = {
  encrypted: '<strong>encrypted</strong> to the application\'s own key',
  unencrypted: '<strong>not encrypted</strong>: the application chose to receive your data in plain form',
  withheld: 'not encrypted, so <strong>no personal data</strong> is sent this way',
};

const channelLine = (label: string, mode: ChannelMode): string => `<li>${label}: ${CHANNEL_WORDS[mode]}</li>`;

const CHANNEL_NAMES = { id_token: 'sign-in token', userinfo: 'profile request' } as const;

/** Where one item travels, in words: only through channels that carry personal data to this client. */
function travel(channels: readonly ('id_token' | 'userinfo')[], modes: ConsentPageModel['channels']): string {
  const sent = channels.filter((c) => (c === 'id_token' ? modes.idToken : modes.userinfo) !== 'withheld');
  if (sent.length === 0) return ' — not sent';
  return ` — in the ${sent.map((c) => CHANNEL_NAMES[c]).join(' and the ')}`;
}

/**
 * Where her answer goes, as her browser will go there: the host in its ASCII (punycode) form, as a name that looks
 * like another's is not; "this device" for the loopback interface; the app's scheme for a native app's own scheme.
 */
function destinationOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `the app that opens <strong>${escapeHtml(url.protocol.slice(0, -1))}:</strong> links on this device`;
  return isLoopbackHost(url.hostname) ? 'an application on this device' : `<strong>${escapeHtml(url.host)}</strong>`;
}

/**
 * The consent page (C8): form `#consent-allow` approves, form `#consent-deny` denies. Allow is held off until she has
 * seen the page ({@link SEEN_GATE_SCRIPT}): a page put under her pointer between two clicks does not take the second.
 */
export function consentPage(model: ConsentPageModel): RenderedPage {
  const items = model.items.length
    ? `<ul>${model.items.map((i) => `<li>${escapeHtml(i.text)}${i.essential ? ' <em>(required)</em>' : ''}${travel(i.channels, model.channels)}</li>`).join('')}</ul>`
    : '<p>Only an identifier that lets it recognise you again.</p>';
  return renderPage({
    title: 'Allow access?',
    formTargets: model.redirectTargets,
    script: SEEN_GATE_SCRIPT,
    body: `<h1>Allow access?</h1>
<p><strong><bdi>${escapeHtml(shownName(model.clientName))}</bdi></strong> asks for:</p>
${items}
<p id="consent-destination">Your answer is sent to ${destinationOf(model.redirectUri)}.</p>${model.sharedSubject ? '\n<p id="consent-shared-subject">It recognises you by your account identifier, which other applications receive too: together they could tell it is you.</p>' : ''}
<p>How it is delivered:</p>
<ul>${channelLine('Sign-in token', model.channels.idToken)}${channelLine('Profile request (UserInfo)', model.channels.userinfo)}</ul>
<div class="actions">
<form id="consent-allow" method="post" action="${escapeHtml(model.allowAction)}"><input type="hidden" name="delivery" value="${escapeHtml(model.delivery)}"><button class="primary" type="submit" ${SEEN_GATE_ATTRIBUTE}>Allow</button></form>
<form id="consent-deny" method="post" action="${escapeHtml(model.denyAction)}"><button class="secondary" type="submit">Deny</button></form>
</div>
${SEEN_GATE_HINT}`,
  });
}
