// The one place the public version prefix is written: the gateway serves `/v1/...` and strips
// it before a service sees the path, so a service writes it only where it names a resource to
// the client (a `Location` header).
import type { ApiVersion } from './endpoint';

export const FIRST_VERSION: ApiVersion = 'v1';

/** `/v1/<segments…>`: a resource's path as a client requests it; each segment is encoded. */
export function publicPath(...segments: string[]): string {
  return `/${FIRST_VERSION}/${segments.map(encodeURIComponent).join('/')}`;
}
