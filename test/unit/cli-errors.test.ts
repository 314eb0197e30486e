import { describe, expect, it } from '@jest/globals';

import { baseUrlFrom, failOnError, retryAfterSeconds } from '../../lib/cli/common.js';

const messageOf = (fn: () => void): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return '';
};

describe('what the CLI says when the management API refuses it', () => {
  it('names the management user a 401 tried, and where user and password come from', () => {
    const message = messageOf(() => failOnError({ status: 401, body: { error: 'unauthorized', error_description: 'the management credentials are not valid' } }, 'clients listing', { user: 'ops' }));
    expect(message).toBe(
      'clients listing failed: HTTP 401 unauthorized: the management credentials are not valid (tried the management user "ops", from --user, SVC_MANAGEMENT_USER or the default admin; the password comes from SVC_MANAGEMENT_PASSWORD or --password-file)',
    );
  });

  it('leaves a 401 of another kind (a registration token) without a management user', () => {
    expect(messageOf(() => failOnError({ status: 401, body: { error: 'invalid_token' } }, 'registration'))).toBe('registration failed: HTTP 401 invalid_token');
  });

  it('says how many seconds a 429 asks to wait, from Retry-After in seconds or as a date', () => {
    const body = { error: 'too_many_requests', error_description: 'too many failed logins from this client; try again later' };
    expect(messageOf(() => failOnError({ status: 429, body, retryAfter: '300' }, 'invitation', { user: 'ops' }))).toBe(
      'invitation failed: HTTP 429 too_many_requests: too many failed logins from this client; try again later (wait 300 seconds before trying again; every failed try counts towards the lockout)',
    );
    expect(messageOf(() => failOnError({ status: 429, body, retryAfter: '1' }, 'invitation'))).toContain('(wait 1 second before trying again;');
    expect(messageOf(() => failOnError({ status: 429, body }, 'invitation'))).toContain('(wait before trying again)');
    expect(messageOf(() => failOnError({ status: 429, body, retryAfter: 'soon' }, 'invitation'))).toContain('(wait before trying again)');
  });

  it('reads Retry-After as delay-seconds or an HTTP date (RFC 9110)', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds(' 7 ', now)).toBe(7);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:01:30 GMT', now)).toBe(90);
    expect(retryAfterSeconds('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds('-5', now)).toBeUndefined();
    expect(retryAfterSeconds(undefined, now)).toBeUndefined();
  });
});

describe('what the CLI says of a --url it cannot use', () => {
  it('attack: a URL carrying a password that is not a URL (a stray space, a port of letters) is refused without repeating it, from --url or SVC_BASE_URL', () => {
    for (const url of ['https://admin:pw-SECRET-71c@id.example .com', 'https://admin:pw-SECRET-71c@id.example.com:44x']) {
      const messages = [messageOf(() => baseUrlFrom(url, {})), messageOf(() => baseUrlFrom(undefined, { SVC_BASE_URL: url }))];
      for (const message of messages) expect(message).toBe('--url: a value with an @ (not repeated: it may carry a password) is not an absolute URL');
    }
  });

  it('honest: a value without an @ that is not a URL is named as given', () => {
    expect(messageOf(() => baseUrlFrom('id.example.com', {}))).toBe('--url: "id.example.com" is not an absolute URL');
  });
});

describe('what the CLI says of a gateway that gave up waiting', () => {
  it('attack on the operator: a 504 of a proxy in front (a revoke scanning a large store outlasting its timeout) is not told as undone: the action may be done or under way', () => {
    const result = { status: 504, body: { error: 'unexpected_response', error_description: 'HTTP 504 with a body that is not a JSON object' }, foreign: true as const };
    expect(messageOf(() => failOnError(result, 'revoke', { user: 'ops' }))).toBe(
      "revoke failed: HTTP 504 unexpected_response: HTTP 504 with a body that is not a JSON object (a gateway's timeout: the provider may have done it, or still be at it; check before repeating it)",
    );
  });
});
