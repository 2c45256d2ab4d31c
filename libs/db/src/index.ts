export { openDatabase, migratePostgres, type Database, type DatabaseOptions, type NotificationHandlers, type PrismaLike } from './database';
export { applyMigrations, listMigrations, type MigrationResult, type SqlRunner } from './migrate';
export { serviceDatabase, type ServiceDatabase, type ServiceDatabaseSettings } from './service-database';
export { databaseOutages, isDatabaseUnavailable, isDeadlock, isUniqueViolation, whenUniqueViolated } from './errors';
