import { describe, expect, it } from '@jest/globals';
import { errors } from 'oidc-provider';

import * as ours from '../../lib/errors.js';
import { ERROR_CODES, isSvcError } from '../../lib/errors.js';

/** One instance of every error class of lib/errors.ts, built as its throwers build it. */
const INSTANCES: Record<keyof typeof ERROR_CODES, Error> = {
  SettingsError: new ours.SettingsError('svc.port: not a port', ['svc.port']),
  StoreUnavailableError: new ours.StoreUnavailableError({ cause: new Error('ECONNREFUSED') }),
  AlreadyConsumedError: new ours.AlreadyConsumedError('AuthorizationCode'),
  OutboundFetchError: new ours.OutboundFetchError('https://rp.example/jwks', 'resolves to a private address'),
  ClientKeysRefusedError: new ours.ClientKeysRefusedError('https://rp.example/jwks', 'key #1: too short'),
  ClientDisabledError: new ours.ClientDisabledError(),
  InvalidInvitationAddressError: new ours.InvalidInvitationAddressError('the email query parameter is required'),
  MailDeliveryError: new ours.MailDeliveryError({ cause: new Error('EHLO') }),
  InvalidCursorError: new ours.InvalidCursorError(),
  ToolboxError: new ours.ToolboxError(404, 'not_found', 'no client c1'),
  ClaimSyntaxError: new ours.ClaimSyntaxError('svc.ver.', 8, 'an empty segment'),
  CliError: new ours.CliError('--url: x is not an absolute URL', 2),
  DemoFlowError: new ours.DemoFlowError('invalid_id_token', 'the ID token nonce does not match'),
};

describe('one error vocabulary (lib/errors.ts)', () => {
  it('every error class of the module has a stable code of its own, named in ERROR_CODES', () => {
    const classes = Object.entries(ours).filter(([, v]) => typeof v === 'function' && (v as { prototype?: unknown }).prototype instanceof Error).map(([k]) => k).sort();
    expect(classes).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [name, err] of Object.entries(INSTANCES)) {
      expect(err).toBeInstanceOf((ours as unknown as Record<string, new (...args: never[]) => Error>)[name]);
      expect(err.name).toBe(name);
      expect((err as { code?: string }).code).toBe(ERROR_CODES[name as keyof typeof ERROR_CODES]);
      expect(isSvcError(err)).toBe(true);
    }
    const codes = Object.values(ERROR_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^SVC_[A-Z_]+$/);
  });

  it('the codes are stable: logs and dashboards key on them', () => {
    expect(ERROR_CODES).toEqual({
      SettingsError: 'SVC_SETTINGS_INVALID',
      StoreUnavailableError: 'SVC_STORE_UNAVAILABLE',
      AlreadyConsumedError: 'SVC_ALREADY_CONSUMED',
      OutboundFetchError: 'SVC_OUTBOUND_FETCH_FAILED',
      ClientKeysRefusedError: 'SVC_CLIENT_KEYS_REFUSED',
      ClientDisabledError: 'SVC_CLIENT_DISABLED',
      InvalidInvitationAddressError: 'SVC_INVALID_INVITATION_ADDRESS',
      MailDeliveryError: 'SVC_MAIL_FAILED',
      InvalidCursorError: 'SVC_INVALID_CURSOR',
      ToolboxError: 'SVC_TOOLBOX_REFUSED',
      ClaimSyntaxError: 'SVC_CLAIM_SYNTAX',
      CliError: 'SVC_CLI_FAILED',
      DemoFlowError: 'SVC_DEMO_FLOW_FAILED',
    });
  });

  it('protocol errors extend oidc-provider\'s classes and keep its OAuth error, status and exposure', () => {
    const store = INSTANCES.StoreUnavailableError as ours.StoreUnavailableError;
    expect(store).toBeInstanceOf(errors.OIDCProviderError);
    expect([store.status, store.error, store.expose, store.error_description]).toEqual([503, 'server_error', true, 'the provider store is temporarily unavailable, try again shortly']);
    const disabled = INSTANCES.ClientDisabledError as ours.ClientDisabledError;
    expect(disabled).toBeInstanceOf(errors.OIDCProviderError);
    expect([disabled.status, disabled.error, disabled.expose]).toEqual([403, 'client_disabled', true]);
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
    expect(isSvcError({ code: 'SVC_STORE_UNAVAILABLE' })).toBe(false);
    expect(isSvcError(undefined)).toBe(false);
  });
});
