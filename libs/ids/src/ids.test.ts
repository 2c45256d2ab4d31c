import { isId, newId } from './index';

describe('ids', () => {
  it('makes unique, time-ordered UUIDv7 strings', () => {
    const ids = Array.from({ length: 1000 }, () => newId());
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every(isId)).toBe(true);
  });

  it('refuses what is not a lower-case UUIDv7', () => {
    for (const value of ['', '123', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', newId().toUpperCase(), 42, null, `${newId()}x`]) {
      expect(isId(value)).toBe(false);
    }
  });
});
