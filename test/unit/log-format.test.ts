import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

import { createPinoLogger } from '../../lib/index.js';
import { defaultLogFormat } from '../../lib/observability/pino-logger.js';
import { prettyLine } from '../../lib/observability/pretty.js';
import { redactUrlCredentials } from '../../lib/logger.js';
import { keyLabel } from '../../policies/jwk-rules.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-log-'));

describe('log formats (svc.log.format, issue 15 item 9)', () => {
  it('writes one readable line per event: time of day, level, event, fields in order', () => {
    const time = new Date(2026, 0, 2, 10, 42, 1, 123).toISOString();
    const line = prettyLine(JSON.stringify({ level: 'info', time, event: 'listening', port: 3000, url: 'http://localhost:3000', store: 'memory', skipped: undefined, msg: 'listening' }), false);
    expect(line).toBe('10:42:01.123 INFO  listening port=3000 url=http://localhost:3000 store=memory\n');
  });

  it('quotes values that are not plain words, so a field cannot fake another', () => {
    const line = prettyLine(JSON.stringify({ level: 'warn', time: new Date().toISOString(), event: 'unsafe_default', reason: 'the store is "memory" fix=none', n: null }), false);
    expect(line).toMatch(/ WARN {2}unsafe_default reason="the store is \\"memory\\" fix=none" n=null\n$/);
  });

  it("attack: a relying party's kid cannot drive the terminal through a pretty line (C1 CSI, DEL, bidi override, line separator)", () => {
    const kid = '\u009b2J\u009b31m\u007f\u202egnp.evil\u2028forged';
    const rule = `${keyLabel({ kid }, 0)}: RSA public exponent 1 is below 65537`;
    expect(rule).toContain('\u009b');
    const file = join(dir, 'hostile.log');
    const logger = createPinoLogger({ destination: file, sync: true, format: 'pretty' });
    logger.warn('client_keys_refused', { client_id: 'rp-1', host: 'rp.example', rule });
    logger.flush?.();
    const written = readFileSync(file, 'utf8');
    // eslint-disable-next-line no-control-regex -- the characters a terminal acts on
    expect(written.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    const quoted = / rule=(".*")$/.exec(written.trimEnd())?.[1];
    expect(JSON.parse(quoted ?? 'null')).toBe(rule);
  });

  it("attack: the same kid cannot drive the terminal through a JSON line either (docker logs, journalctl and tail show them raw), and the line parses to the same values", () => {
    const kid = '\u009b2J\u009b31m\u007f\u202egnp.evil\u2028forged\u2066';
    const rule = `${keyLabel({ kid }, 0)}: RSA public exponent 1 is below 65537`;
    const file = join(dir, 'hostile-json.log');
    const logger = createPinoLogger({ destination: file, sync: true, format: 'json' });
    logger.warn('client_keys_refused', { client_id: 'rp-1', host: 'rp.example', rule });
    logger.flush?.();
    const written = readFileSync(file, 'utf8');
    expect(written.endsWith('\n')).toBe(true);
    // eslint-disable-next-line no-control-regex -- the characters a terminal acts on
    expect(written.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(written)).toMatchObject({ event: 'client_keys_refused', rule });
  });

  it('honest: a JSON line keeps letters beyond ASCII, Arabic and a joined emoji as they are', () => {
    const cause = 'Adresse refusée → *@exämple.de; مرحبا; 👩\u200d💻';
    const file = join(dir, 'letters-json.log');
    const logger = createPinoLogger({ destination: file, sync: true, format: 'json' });
    logger.error('invitation_mail_failed', { cause });
    logger.flush?.();
    const written = readFileSync(file, 'utf8');
    expect(written).toContain(`"cause":"${cause}"`);
  });

  it('honest: letters and symbols beyond ASCII stay as they are, only quoted', () => {
    const line = prettyLine(JSON.stringify({ level: 'error', time: new Date().toISOString(), event: 'invitation_mail_failed', cause: 'Adresse refusée → *@exämple.de' }), false);
    expect(line).toMatch(/ cause="Adresse refusée → \*@exämple\.de"\n$/);
  });

  it('colours the level on a terminal only', () => {
    const json = JSON.stringify({ level: 'error', time: new Date().toISOString(), event: 'server_error' });
    expect(prettyLine(json, true)).toContain('\u001b[31mERROR\u001b[0m');
    expect(prettyLine(json, false)).not.toContain('\u001b[');
  });

  it('passes a line that is not JSON unchanged', () => {
    expect(prettyLine('plain text', false)).toBe('plain text\n');
  });

  it('createPinoLogger writes pretty or JSON lines as asked', () => {
    const pretty = join(dir, 'pretty.log');
    const loggerP = createPinoLogger({ destination: pretty, sync: true, format: 'pretty' });
    loggerP.info('stopped', { signal: 'SIGTERM' });
    loggerP.warn('keys_reload_failed', { reason: 'not valid JSON' });
    loggerP.flush?.();
    expect(readFileSync(pretty, 'utf8')).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}stopped signal=SIGTERM\n\d\d:\d\d:\d\d\.\d{3} WARN {2}keys_reload_failed reason="not valid JSON"\n$/);
    const json = join(dir, 'json.log');
    const loggerJ = createPinoLogger({ destination: json, sync: true, format: 'json' });
    loggerJ.info('stopped', { signal: 'SIGTERM' });
    loggerJ.flush?.();
    expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ level: 'info', event: 'stopped', signal: 'SIGTERM' });
  });

  it("honest: a quiet server's routine line reaches its log on its own, without a warning or 4 KiB of lines behind it (an operator's disable shows in journalctl -f)", async () => {
    const file = join(dir, 'quiet.log');
    const logger = createPinoLogger({ destination: file, format: 'json' });
    logger.info('management_audit', { user: 'ops', action: 'clients.disable', outcome: 'done' });
    let text = '';
    while (!text.includes('management_audit')) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      text = readFileSync(file, 'utf8');
    }
    expect(JSON.parse(text)).toMatchObject({ level: 'info', event: 'management_audit', action: 'clients.disable' });
  });

  it('defaults to JSON in production and when the output is not a terminal', () => {
    const notATerminal = openSync(join(dir, 'fd.log'), 'w');
    expect(defaultLogFormat(false, notATerminal)).toBe('json');
    expect(defaultLogFormat(true, notATerminal)).toBe('json');
    expect(defaultLogFormat(true, 1)).toBe('json');
  });
});

describe('credentials inside URLs', () => {
  it.each([
    ['redis://:secret@127.0.0.1:6379/0', 'redis://:***@127.0.0.1:6379/0'],
    ['rediss://default:s3cr%40t@redis.example:6380', 'rediss://default:***@redis.example:6380'],
    ['smtp://user:pass@mail.example:587', 'smtp://user:***@mail.example:587'],
    ['smtps://mail.example?password=x&pool=true', 'smtps://mail.example?password=***&pool=true'],
    ['https://example.com/path?token=abc', 'https://example.com/path?token=***'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['not a url', 'not a url'],
  ])('%s is shown as %s', (text, shown) => {
    expect(redactUrlCredentials(text)).toBe(shown);
  });
});
