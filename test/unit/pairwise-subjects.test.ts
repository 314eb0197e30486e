import { describe, expect, it } from '@jest/globals';

import { isUnowned, pairwiseSub, sectorOf, subjectTypeFor } from '../../policies/subjects.js';

const KEY = 'k'.repeat(32);

describe('pairwise subjects (policies/subjects.ts)', () => {
  it('derives one stable sub per sector and account, different across sectors, accounts and keys', () => {
    const sub = pairwiseSub(KEY, 'rp.example', 'demo-0001');
    expect(sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pairwiseSub(KEY, 'rp.example', 'demo-0001')).toBe(sub);
    for (const other of [pairwiseSub(KEY, 'other.example', 'demo-0001'), pairwiseSub(KEY, 'rp.example', 'demo-0002'), pairwiseSub('j'.repeat(32), 'rp.example', 'demo-0001')]) {
      expect(other).not.toBe(sub);
    }
  });

  it('keeps sector and account apart: no two pairs collide by concatenation', () => {
    expect(pairwiseSub(KEY, 'a.example', 'b|c')).not.toBe(pairwiseSub(KEY, 'a.example|b', 'c'));
    expect(pairwiseSub(KEY, 'ab', 'c')).not.toBe(pairwiseSub(KEY, 'a', 'bc'));
  });

  it('takes the sector from sector_identifier_uri (the document, not its host), else the first redirect URI (host with port)', () => {
    expect(sectorOf({ redirect_uris: ['https://rp.example:8443/cb', 'https://b.example/cb'] })).toBe('rp.example:8443');
    expect(sectorOf({ redirect_uris: ['https://rp.example/cb'], sector_identifier_uri: 'https://sector.example/s.json#x' })).toBe('https://sector.example/s.json');
  });

  it('gives native apps with private-use schemes sectors of their own, not one empty sector', () => {
    const a = sectorOf({ redirect_uris: ['com.example.app:/cb'] });
    const b = sectorOf({ redirect_uris: ['org.other.app:/cb'] });
    expect([a, b]).toEqual(['com.example.app:', 'org.other.app:']);
    expect(subjectTypeFor({ redirect_uris: ['com.example.app:/cb', 'org.other.app:/cb'] }, 'pairwise')).toBe('public');
  });

  it('gives a client, native or web, with a redirect URI on the loopback interface a sector of its own; one with a sector_identifier_uri keeps the document', () => {
    for (const uri of ['http://127.0.0.1/cb', 'http://127.3.2.1:8080/cb', 'http://localhost/cb', 'http://[::1]:9000/cb', 'http://[::ffff:127.0.0.1]/cb', 'http://LOCALHOST./cb', 'http://app.localhost/cb', 'http://0.0.0.0/cb', 'http://[::]/cb', 'http://127.1/cb', 'https://localhost:8443/cb']) {
      expect(sectorOf({ redirect_uris: [uri], client_id: 'app-1' })).toBe('native client app-1');
    }
    expect(sectorOf({ redirect_uris: ['http://127.0.0.1/cb'], client_id: 'app-1', sector_identifier_uri: 'https://s.example/s' })).toBe('https://s.example/s');
    expect(sectorOf({ redirect_uris: ['http://127.0.0.1.example/cb', 'https://localhost.example/cb'], client_id: 'app-1' })).toBe('127.0.0.1.example');
    for (const uri of ['http://[::ffff:808:808]/cb', 'http://10.0.0.1/cb', 'http://mylocalhost/cb']) expect(isUnowned(uri)).toBe(false);
  });

  it('applies the default only when subject_type is absent, and falls back to public across hosts', () => {
    expect(subjectTypeFor({ redirect_uris: ['https://rp.example/a', 'https://rp.example/b'] }, 'pairwise')).toBe('pairwise');
    expect(subjectTypeFor({ redirect_uris: ['http://localhost:8080/cb', 'http://127.0.0.1:8080/cb'] }, 'pairwise')).toBe('public');
    expect(subjectTypeFor({ redirect_uris: ['http://localhost:8080/cb', 'http://127.0.0.1:8080/cb'], sector_identifier_uri: 'https://s.example/s' }, 'pairwise')).toBe('pairwise');
    expect(subjectTypeFor({ redirect_uris: ['https://rp.example/cb'] }, 'public')).toBe('public');
    expect(subjectTypeFor({ redirect_uris: ['https://a.example/cb', 'https://b.example/cb'], subject_type: 'pairwise' }, 'public')).toBe('pairwise');
  });
});
