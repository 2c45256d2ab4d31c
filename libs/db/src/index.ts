export { type Database, type NotificationHandlers, type PrismaLike } from './database';
export { serviceDatabase, type ServiceDatabase, type ServiceDatabaseSettings } from './service-database';
export { databaseOutages, isDeadlock, isUniqueViolation, whenUniqueViolated } from './errors';
