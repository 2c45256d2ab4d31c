// "Name contains" (`q`) for every list that has it, on PostgreSQL and PGlite alike: a keyword with
// three letters or digits in a row is looked up through a trigram index (pg_trgm); a shorter one,
// or one without such a run ("a-4", "%"), has no trigram, and the trigram index would read every
// entry for it, so it is looked up among the names' lower-cased one- and two-character pieces,
// which each row keeps in an indexed text[] column. LIKE's wildcards in a keyword are plain characters.

/** The keyword with LIKE's wildcards (`%`, `_`) and escape character (`\`) made literal. */
export function escapeLike(keyword: string): string {
  return keyword.replace(/[\\%_]/g, '\\$&');
}

/** The lower-cased one- and two-character pieces of `names` (each name alone: no piece spans two names). */
export function nameFragmentsOf(names: readonly string[]): string[] {
  const fragments = new Set<string>();
  for (const name of names) {
    const characters = [...name.toLowerCase()];
    characters.forEach((character, i) => {
      fragments.add(character);
      if (i + 1 < characters.length) fragments.add(character + characters[i + 1]);
    });
  }
  return [...fragments];
}

/**
 * How to look a keyword up: `contains`, LIKE-escaped, for `ILIKE '%' || contains || '%'` (absent
 * for one or two characters, which the fragments decide exactly); `fragments`, pieces the row's
 * fragments must all hold (absent when the keyword has a trigram).
 */
export function keywordLookup(keyword: string | undefined): { contains?: string; fragments?: string[] } {
  if (!keyword) return {};
  const characters = [...keyword.toLowerCase()];
  if (characters.length <= 2) return { fragments: [characters.join('')] };
  const contains = escapeLike(keyword);
  // pg_trgm reads letters beyond ASCII as word characters only under some database locales.
  if (/[A-Za-z0-9]{3}/.test(keyword)) return { contains };
  return { contains, fragments: [...new Set(characters.slice(1).map((character, i) => characters[i] + character))] };
}
