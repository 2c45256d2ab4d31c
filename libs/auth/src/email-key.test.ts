import { emailKeyOf } from './email-key';

describe('the e-mail key (how an address is unique, found at sign-in and rate-limited)', () => {
  it.each([
    ['letter case', 'Ada.Lovelace@Example.COM', 'ada.lovelace@example.com'],
    ['spaces, tabs and new lines around it', ' \t ada@example.com\r\n', 'ada@example.com'],
    ['a no-break space and a byte order mark around it', '\u00a0\ufeffada@example.com\u3000', 'ada@example.com'],
    ['accented capitals', 'ÉMILE@EXEMPLE.FR', 'émile@exemple.fr'],
    ['the Kelvin sign, whose lower case is the Latin k', '\u212aim@example.com', 'kim@example.com'],
    ['a dotted capital I, whose lower case is two code points', '\u0130stanbul@example.com', 'i\u0307stanbul@example.com'],
    ['full-width letters: no compatibility folding, another address', 'ＡＤＡ@example.com', 'ａｄａ@example.com'],
    ['nothing but white space', ' \t ', ''],
  ])('%s', (_case, email, key) => {
    expect(emailKeyOf(email)).toBe(key);
  });
});
