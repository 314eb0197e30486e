import { expect } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, redirectParams } from './flow.js';

/** A person partway through a code flow: her browser and her PKCE pair. */
export interface MidFlowPerson {
  browser: FormBrowser;
  verifier: string;
  challenge: string;
}

/** `count` people, each in a browser of her own, at the login page of a code flow of `client`. */
export async function peopleAtLogin(running: { issuer: string; baseUrl: string }, client: ClientMetadata, count: number): Promise<MidFlowPerson[]> {
  const people = Array.from({ length: count }, () => ({ browser: new FormBrowser(), ...pkcePair() }));
  for (const [i, person] of people.entries()) {
    await person.browser.follow(codeFlowUrl(running.issuer, client, { state: `mid-flow-${i}`, code_challenge: person.challenge }), running.baseUrl);
    expect(person.browser.lastPage).toContain('id="login-form"');
  }
  return people;
}

/** Each person signs in as `demo`, allows and redeems her code: per person, the login answer's status and the ID token's type (null without a code). */
export async function finishFlows(running: { issuer: string; baseUrl: string }, client: ClientMetadata, people: readonly MidFlowPerson[]): Promise<[number | undefined, string | null][]> {
  const finished: [number | undefined, string | null][] = [];
  for (const person of people) {
    const signedIn = await person.browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    const { leftTo } = signedIn.response?.status === 200 ? await person.browser.submit('consent-allow', {}, running.baseUrl) : {};
    const code = leftTo ? redirectParams(leftTo).get('code') : null;
    finished.push([signedIn.response?.status, code ? typeof (await redeemCode(running.issuer, client, code, person.verifier)).body.id_token : null]);
  }
  return finished;
}
