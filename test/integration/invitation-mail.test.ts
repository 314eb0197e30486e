import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createMailer } from '../../lib/index.js';
import { invitationMail, MAIL_LINE_LIMIT } from '../../lib/management/invitation-mail.js';
import { startApp, type RunningApp } from '../helpers/app.js';

const run = promisify(execFile);
const PASSWORD = 'mail-test-password';
const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

/** The lines of the raw message text, as a person copying from the file sees them. */
const linesOf = (raw: string): string[] => raw.replace(/\r\n/g, '\n').split('\n');

/** The token line of the raw text part: the line after "Initial access token …:" and a blank line. */
function rawToken(raw: string): string {
  const match = /^Initial access token \(one registration, until [^)]+\):\n\n(\S+)\n/m.exec(raw.replace(/\r\n/g, '\n'));
  if (!match?.[1]) throw new Error('no token line in the raw message');
  return match[1];
}

/** The first shell command in the raw message: from the line starting `curl ` to the next blank line. */
function rawCurl(raw: string): string {
  const lines = linesOf(raw);
  const start = lines.findIndex((l) => l.startsWith('curl '));
  if (start < 0) throw new Error('no curl command in the raw message');
  const end = lines.indexOf('', start);
  return lines.slice(start, end).join('\n');
}

/** The body parts of a raw message with their Content-Transfer-Encoding. */
function partEncodings(raw: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const m of raw.matchAll(/Content-Type: (text\/(?:plain|html))[^\n]*\r?\n(?:[^\n]+\r?\n)*?Content-Transfer-Encoding: (\S+)/g)) found[m[1] as string] = m[2] as string;
  return found;
}

describe('the invitation mail survives copying from the raw .eml', () => {
  const outbox = mkdtempSync(join(tmpdir(), 'svc-mail-'));
  let running: RunningApp;
  let raw: string;
  let answer: Record<string, unknown>;

  beforeAll(async () => {
    running = await startApp({ properties: { 'svc.mail.outbox-dir': outbox, 'svc.management.password': PASSWORD } });
    const response = await fetch(`${running.issuer}/management/invite_client?email=partner%40example.com`, { headers: { authorization: basic } });
    expect(response.status).toBe(202);
    answer = (await response.json()) as Record<string, unknown>;
    const files = readdirSync(outbox).filter((f) => f.endsWith('.eml'));
    expect(files).toHaveLength(1);
    raw = readFileSync(join(outbox, files[0] as string), 'utf8');
  });
  afterAll(async () => running.close());

  it('says where the mail went: the outbox file, by its absolute path', () => {
    const files = readdirSync(outbox).filter((f) => f.endsWith('.eml'));
    expect(answer.mail).toEqual({ transport: 'outbox', file: join(outbox, files[0] as string) });
  });

  it('sends both parts as 7bit: no quoted-printable, no soft line break anywhere, every body line within 76 characters', () => {
    expect(partEncodings(raw)).toEqual({ 'text/plain': '7bit', 'text/html': '7bit' });
    expect(raw).not.toMatch(/=\r?\n/);
    expect(raw).not.toContain('=3D');
    const body = raw.slice(raw.search(/\r?\n\r?\n/));
    for (const line of linesOf(body)) expect(line.length).toBeLessThanOrEqual(MAIL_LINE_LIMIT);
  });

  it('holds the token on a line of its own, in both parts, and it registers a client', async () => {
    const token = rawToken(raw);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(linesOf(raw).filter((l) => l === token)).toHaveLength(2);
    const response = await fetch(`${running.issuer}/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://partner.example/cb'] }),
    });
    expect(response.status).toBe(201);
  });

  it('holds a curl command that runs as copied from the raw file (bash -c) and registers with 201', async () => {
    // A fresh invitation: the one above was spent by the previous test when run in order.
    const response = await fetch(`${running.issuer}/management/invite_client?email=curl%40example.com`, { headers: { authorization: basic } });
    const file = ((await response.json()) as { mail: { file: string } }).mail.file;
    const command = rawCurl(readFileSync(file, 'utf8'));
    const { stdout } = await run('bash', ['-c', `${command} -w '\\n%{http_code}'`]);
    const lines = stdout.trim().split('\n');
    expect(lines[lines.length - 1]).toBe('201');
    const client = JSON.parse(lines.slice(0, -1).join('\n')) as Record<string, unknown>;
    expect(client).toMatchObject({ client_name: 'Your app', redirect_uris: ['https://your-app.example/callback'] });
    // The same command again: the token was single use.
    const again = await run('bash', ['-c', `${command} -w '\\n%{http_code}'`]);
    expect(again.stdout.trim().split('\n').pop()).toBe('401');
  });
});

describe('an invitation mail for a long registration endpoint', () => {
  const endpoint = `https://login.${'very-long-subdomain-name.'.repeat(3)}example.com/tenants/o'hara/oidc/v1/register`;
  const token = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';

  it('keeps every line of the curl command within 76 characters, and the shell glues the URL back into one word', async () => {
    const outbox = mkdtempSync(join(tmpdir(), 'svc-mail-long-'));
    const mailer = createMailer({ outboxDir: outbox });
    const receipt = await mailer.send(invitationMail({ from: 'idp@example.com', to: 'rp@example.com', token, expiresAt: 1_900_000_000, registrationEndpoint: endpoint }));
    mailer.close();
    if (!receipt || receipt.transport !== 'outbox') throw new Error('expected an outbox receipt');
    const text = readFileSync(receipt.file, 'utf8');
    expect(partEncodings(text)).toEqual({ 'text/plain': '7bit', 'text/html': '7bit' });
    expect(text).not.toMatch(/=\r?\n/);
    expect(rawToken(text)).toBe(token);
    const command = rawCurl(text);
    for (const line of command.split('\n')) expect(line.length).toBeLessThanOrEqual(MAIL_LINE_LIMIT);
    // A stand-in curl prints the words the shell made of the command.
    const { stdout } = await run('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${command}`]);
    const words = stdout.split('\0');
    expect(words).toContain(`Authorization: Bearer ${token}`);
    expect(words).toContain(endpoint);
    expect(JSON.parse(words[words.indexOf('-d') + 1] as string)).toEqual({ redirect_uris: ['https://your-app.example/callback'], client_name: 'Your app' });
  });
});

describe('an invitation mail for a registration endpoint with & in its path', () => {
  // Its HTML part writes each & as &amp;: four characters more on a line than in the text part.
  const endpoint = 'https://login.example.com/terms&conditions/tenants/research&development/oidc/v1/register';
  const token = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';

  it('keeps the HTML part 7bit too, every line of both parts within 76 characters, and the URL one word in both', async () => {
    const outbox = mkdtempSync(join(tmpdir(), 'svc-mail-amp-'));
    const mailer = createMailer({ outboxDir: outbox });
    const receipt = await mailer.send(invitationMail({ from: 'idp@example.com', to: 'rp@example.com', token, expiresAt: 1_900_000_000, registrationEndpoint: endpoint }));
    mailer.close();
    if (!receipt || receipt.transport !== 'outbox') throw new Error('expected an outbox receipt');
    const raw = readFileSync(receipt.file, 'utf8');
    expect(partEncodings(raw)).toEqual({ 'text/plain': '7bit', 'text/html': '7bit' });
    expect(raw).not.toMatch(/=\r?\n/);
    for (const line of linesOf(raw.slice(raw.search(/\r?\n\r?\n/)))) expect(line.length).toBeLessThanOrEqual(MAIL_LINE_LIMIT);
    const html = linesOf(raw.slice(raw.indexOf('<!DOCTYPE html>')));
    const start = html.findIndex((l) => l.startsWith('curl '));
    const htmlCommand = html.slice(start, html.indexOf('</pre>', start)).join('\n').replace(/&amp;/g, '&');
    const text = linesOf(raw);
    const note = text.findIndex((l) => l.startsWith('Registration endpoint (one URL'));
    expect(text.slice(note + 2, text.indexOf('', note + 2)).join('')).toBe(endpoint);
    const inHtml = html.findIndex((l) => l.startsWith('Registration endpoint (one URL'));
    expect(html.slice(inHtml + 3, html.indexOf('</pre>', inHtml)).join('').replace(/&amp;/g, '&')).toBe(endpoint);
    for (const part of [rawCurl(raw), htmlCommand]) {
      const { stdout } = await run('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${part}`]);
      expect(stdout.split('\0')).toContain(endpoint);
    }
  });
});
