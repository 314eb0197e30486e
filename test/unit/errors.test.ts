import { readFileSync } from 'node:fs';

import { describe, expect, it } from '@jest/globals';
import { errors } from 'oidc-provider';

import * as ours from '../../lib/errors.js';
import { isSvcError } from '../../lib/errors.js';

type ErrorClass = (new (...args: never[]) => Error) & { readonly code?: unknown };

/** The error classes lib/errors.ts exports, found by what they are, not by a list. */
const CLASSES = (Object.entries(ours) as [string, unknown][]).filter((entry): entry is [string, ErrorClass] => typeof entry[1] === 'function' && (entry[1] as { prototype?: unknown }).prototype instanceof Error);

/** One instance of every error class of lib/errors.ts, built as its throwers build it. */
const INSTANCES: Record<string, Error> = {
  SettingsError: new ours.SettingsError('svc.port: not a port', ['svc.port']),
  StoreUnavailableError: new ours.StoreUnavailableError({ cause: new Error('ECONNREFUSED') }),
  AlreadyConsumedError: new ours.AlreadyConsumedError('AuthorizationCode'),
  OutboundFetchError: new ours.OutboundFetchError('https://rp.example/jwks', 'resolves to a private address'),
  ClientKeysRefusedError: new ours.ClientKeysRefusedError('https://rp.example/jwks', 'key #1: too short'),
  ClientDisabledError: new ours.ClientDisabledError(),
  InvalidInvitationAddressError: new ours.InvalidInvitationAddressError('the email query parameter is required'),
  MailDeliveryError: new ours.MailDeliveryError({ cause: new Error('EHLO') }),
  ClaimModuleError: new ours.ClaimModuleError('email', new Error('no record')),
  AuthenticatorError: new ours.AuthenticatorError(new Error('locked')),
  AuthenticatorUnavailableError: new ours.AuthenticatorUnavailableError({ cause: Object.assign(new Error('connect ECONNREFUSED for uid=erika'), { code: 'ECONNREFUSED' }) }),
  InvalidCursorError: new ours.InvalidCursorError(),
  StoreRecordUnreadableError: new ours.StoreRecordUnreadableError(),
  ToolboxError: new ours.ToolboxError(404, 'not_found', 'no client c1'),
  ClaimSyntaxError: new ours.ClaimSyntaxError('svc.ver.', 8, 'an empty segment'),
  CliError: new ours.CliError('--url: x is not an absolute URL', 2),
  DemoFlowError: new ours.DemoFlowError('invalid_id_token', 'the ID token nonce does not match'),
};

describe('one error vocabulary (lib/errors.ts)', () => {
  it('every error class carries a static code of its own, and its instances carry the same code', () => {
    expect(CLASSES.map(([name]) => name).sort()).toEqual(Object.keys(INSTANCES).sort());
    for (const [name, type] of CLASSES) {
      const err = INSTANCES[name] as Error & { code?: unknown };
      expect(err).toBeInstanceOf(type);
      expect(err.name).toBe(name);
      expect(type.code).toMatch(/^SVC_[A-Z_]+$/);
      expect(err.code).toBe(type.code);
      expect(isSvcError(err)).toBe(true);
    }
    const codes = CLASSES.map(([, type]) => type.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('every class has the code docs/architecture.md promises to logs and dashboards', () => {
    const documented = new Map([...readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8').matchAll(/^\| `(\w+)` \| `(SVC_[A-Z_]+)` \|/gm)].map((m) => [m[1], m[2]]));
    expect(documented.size).toBe(CLASSES.length);
    for (const [name, type] of CLASSES) expect([name, type.code]).toEqual([name, documented.get(name)]);
  });

  it('protocol errors extend oidc-provider\'s classes and keep its OAuth error, status and exposure', () => {
    const store = INSTANCES.StoreUnavailableError as ours.StoreUnavailableError;
    expect(store).toBeInstanceOf(errors.OIDCProviderError);
    expect([store.status, store.error, store.expose, store.error_description]).toEqual([503, 'server_error', true, 'the provider store is temporarily unavailable, try again shortly']);
    const disabled = INSTANCES.ClientDisabledError as ours.ClientDisabledError;
    expect(disabled).toBeInstanceOf(errors.OIDCProviderError);
    expect([disabled.status, disabled.error, disabled.expose]).toEqual([403, 'client_disabled', true]);
    const directory = INSTANCES.AuthenticatorUnavailableError as ours.AuthenticatorUnavailableError;
    expect(directory).toBeInstanceOf(errors.OIDCProviderError);
    expect([directory.status, directory.error, directory.expose, directory.error_description]).toEqual([503, 'server_error', true, 'the sign-in service is temporarily unavailable, try again shortly']);
    expect([directory.thrown, JSON.stringify(directory), directory.message, directory.cause]).toEqual([{ name: 'Error', code: 'ECONNREFUSED' }, expect.not.stringContaining('erika'), 'server_error', undefined]);
    const consumed = INSTANCES.AlreadyConsumedError as ours.AlreadyConsumedError;
    expect(consumed).toBeInstanceOf(errors.InvalidGrant);
    expect([consumed.status, consumed.error, consumed.expose]).toEqual([400, 'invalid_grant', true]);
    // Settings errors are misuse at construction: a TypeError naming the property.
    expect(INSTANCES.SettingsError).toBeInstanceOf(TypeError);
  });

  it('isSvcError tells ours from everyone else\'s, whatever they call their code', () => {
    expect(isSvcError(new Error('x'))).toBe(false);
    expect(isSvcError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isSvcError(new errors.InvalidGrant('x'))).toBe(false);
    expect(isSvcError({ code: ours.StoreUnavailableError.code })).toBe(false);
    expect(isSvcError(Object.assign(new Error('x'), { code: ours.StoreUnavailableError.code }))).toBe(false);
    expect(isSvcError(undefined)).toBe(false);
  });

  it("attack: a plug-in's thrown object whose name or code throws when read (a getter, a Proxy) keeps what reads, and what reading threw goes nowhere", () => {
    const exposed = (): never => {
      throw new errors.InvalidRequest('record of erika@example.com is locked');
    };
    const getter = Object.defineProperty(Object.assign(new Error('x'), { name: 'DriverError' }), 'code', { get: exposed });
    const proxy = new Proxy({}, { get: exposed });
    const shapes = [getter, proxy].flatMap((thrown) => [new ours.ClaimModuleError('m', thrown), new ours.AuthenticatorError(thrown), new ours.AuthenticatorUnavailableError({ cause: thrown })].map((e) => e.thrown));
    expect(shapes).toEqual([{ name: 'DriverError' }, { name: 'DriverError' }, { name: 'DriverError' }, {}, {}, {}]);
  });
});
