import { escapeLike, keywordLookup, nameFragmentsOf } from './keyword';

describe('keyword lookup (q)', () => {
  it('makes LIKE wildcards and the escape character literal', () => {
    expect(escapeLike('50%_off\\')).toBe('50\\%\\_off\\\\');
  });

  it('keeps the lower-cased one- and two-character pieces of each name, none spanning two names', () => {
    expect(nameFragmentsOf(['Ab', 'c']).sort()).toEqual(['a', 'ab', 'b', 'c']);
  });

  it('looks up one or two characters by their piece, three in a row by trigram, anything else by both', () => {
    expect(keywordLookup(undefined)).toEqual({});
    expect(keywordLookup('')).toEqual({});
    expect(keywordLookup('Q')).toEqual({ fragments: ['q'] });
    expect(keywordLookup('%_')).toEqual({ fragments: ['%_'] });
    expect(keywordLookup('Lamp%')).toEqual({ contains: 'Lamp\\%' });
    expect(keywordLookup('a-4a')).toEqual({ contains: 'a-4a', fragments: ['a-', '-4', '4a'] });
  });
});
