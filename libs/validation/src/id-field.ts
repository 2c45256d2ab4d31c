// An identifier sent in a body or a query: a UUID string, or a 422 INVALID_FORMAT on its field. Ids in paths are
// answered 404 instead (the resource is absent), by the services' own isId checks.
import { isId } from '@platform/ids';
import { z } from 'zod';

export const idField = () => z.string().refine(isId, { message: 'must be an id (a UUID)', params: { code: 'INVALID_FORMAT' } }).meta({ format: 'uuid' });
