// The one parser of query strings (express's `query parser` in every service, createService):
// node's querystring, as express's default, except that a name or value whose %-encoding does
// not decode is the client's 400 rather than a value with U+FFFD or the raw escape in it
// (querystring keeps both silently, and the request went on as if the client had sent that).
import { parse, type ParsedUrlQuery } from 'node:querystring';
import type { FieldError } from '@platform/errors';
import { refusalOf } from './validate';

/** The text `encoded` stands for (`+` a space, as in a form), or undefined when its %-encoding is broken. */
function decoded(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded.replaceAll('+', ' '));
  } catch {
    return undefined; // URIError: an escape that is cut short, not hex, or not UTF-8
  }
}

/**
 * Parses a query string, or throws 400 VALIDATION_FAILED naming every parameter whose name or
 * value has a malformed %-encoding (INVALID_FORMAT; a name that does not decode is named as sent).
 * A string without `%` cannot hold one, so the common case costs one scan.
 */
export function readQueryString(raw: string | null | undefined): ParsedUrlQuery {
  if (!raw) return parse(''); // express hands null for a URL without `?`
  if (raw.includes('%')) {
    const fieldErrors: FieldError[] = [];
    for (const pair of raw.split('&')) {
      if (!pair.includes('%')) continue;
      const at = pair.indexOf('=');
      const name = at < 0 ? pair : pair.slice(0, at);
      const field = decoded(name);
      if (field !== undefined && (at < 0 || decoded(pair.slice(at + 1)) !== undefined)) continue;
      fieldErrors.push({ field: field ?? name, code: 'INVALID_FORMAT', message: `${field ?? name} has a malformed %-encoding.` });
    }
    // Unreadable as sent (400), whatever the field code: refusalOf is where that is decided.
    if (fieldErrors.length) throw refusalOf(fieldErrors, { message: 'The query string has a malformed %-encoding.', unreadable: true });
  }
  return parse(raw);
}
