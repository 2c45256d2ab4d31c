export { type Database, type NotificationHandlers, type PrismaLike } from './database';
export { serviceDatabase, type ServiceDatabase, type ServiceDatabaseSettings } from './service-database';
export { databaseOutages, isDatabaseUnavailable, isDeadlock, isUniqueViolation, whenUniqueViolated } from './errors';
export { countMatching, type MatchingRows, type RawQueries } from './count';
export { escapeLike, keywordLookup, nameFragmentsOf } from './keyword';
