import fc from 'fast-check';
import { newId } from '@platform/ids';
import { apiKeyIdOf, looksLikeApiKey, newApiKeyText, scopeFor } from './api-keys';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('issued API key text', () => {
  it('carries the prefix, the id and a checksum, and gives its id back', () => {
    const id = newId();
    const key = newApiKeyText(id);
    expect(key).toMatch(/^opk_[0-9a-f]{32}_[0-9A-Za-z]{38}$/);
    expect(looksLikeApiKey(key)).toBe(true);
    expect(apiKeyIdOf(key)).toBe(id);
    expect(newApiKeyText(id)).not.toBe(key); // the secret is new each time
  });

  it('refuses every key with one character changed, one missing or one added', () => {
    const key = newApiKeyText(newId());
    fc.assert(
      fc.property(fc.integer({ min: 0, max: key.length - 1 }), fc.constantFrom(...BASE62, '_', '-'), (at, replacement) => {
        fc.pre(key[at] !== replacement);
        expect(apiKeyIdOf(key.slice(0, at) + replacement + key.slice(at + 1))).toBeUndefined();
        expect(apiKeyIdOf(key.slice(0, at) + key.slice(at + 1))).toBeUndefined();
        expect(apiKeyIdOf(key.slice(0, at) + replacement + key.slice(at))).toBeUndefined();
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses what is not a key at all', () => {
    for (const text of ['', 'opk_', 'eyJhbGciOiJIUzI1NiJ9.e30.x', `opk_${'0'.repeat(32)}_${'A'.repeat(38)}`, ` ${newApiKeyText(newId())}`]) expect(apiKeyIdOf(text)).toBeUndefined();
  });

  it('needs :read for reads and :write for the rest', () => {
    expect(scopeFor('orders', false)).toBe('orders:read');
    expect(scopeFor('inventory', true)).toBe('inventory:write');
  });
});
