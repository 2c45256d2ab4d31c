// The one e-mail rule of sign-in: the form under which an account's address is unique, is found at
// sign-in, and is counted by the gateway's sign-in rate limit. users-service stores it (the
// `email_key` column) and looks accounts up by it; the gateway keys its per-e-mail sign-in limit on
// it. Both call this function, so an address the service takes for one account is always one
// budget at the gateway: were they to differ, `Ada@Example.com ` would sign in to Ada's account on
// a fresh budget of password guesses.

/**
 * `email` without the white space around it (String#trim: Unicode white space, NBSP and the BOM
 * included), in lower case by the Unicode default case mapping (String#toLowerCase, not the
 * locale's). No compatibility normalisation (NFKC): a full-width `ａ` stays another address.
 */
export function emailKeyOf(email: string): string {
  return email.trim().toLowerCase();
}
