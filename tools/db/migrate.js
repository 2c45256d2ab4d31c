#!/usr/bin/env node
// `npm run migrate`: applies each service's pending migrations to the PostgreSQL named by
// DATABASE_URL_<APP> (USERS, ORDERS, CATALOG, INVENTORY), as each pod's `migrate` init container does
// (`node main.js migrate`). Apps without such a variable are skipped: the embedded database
// migrates itself at start. `npm start` runs the same step before it starts the apps.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const databases = { 'users-service': 'USERS', 'orders-service': 'ORDERS', 'catalog-service': 'CATALOG', 'inventory-service': 'INVENTORY' };

/** Migrates `apps` (names) whose DATABASE_URL_<APP> is set; returns the failed app's output, or null. */
function migrate(apps = Object.keys(databases), env = process.env) {
  for (const app of apps) {
    const url = databases[app] && env[`DATABASE_URL_${databases[app]}`];
    if (!url) continue;
    const result = spawnSync(process.execPath, [path.join(root, 'dist/apps', app, 'main.js'), 'migrate'], { cwd: root, env: { ...env, DATABASE_URL: url }, encoding: 'utf8' });
    if (result.status !== 0) return { app, output: `${result.stdout}${result.stderr}` };
  }
  return null;
}

module.exports = { migrate };

if (require.main === module) {
  if (!Object.values(databases).some((name) => process.env[`DATABASE_URL_${name}`])) {
    console.error('Set DATABASE_URL_USERS, DATABASE_URL_ORDERS, DATABASE_URL_CATALOG and/or DATABASE_URL_INVENTORY to the PostgreSQL databases to migrate.');
    process.exit(1);
  }
  const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', `--projects=${Object.keys(databases).join(',')}`, '--outputStyle=static'], { cwd: root, stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' } });
  if (build.status !== 0) process.exit(1);
  const failed = migrate();
  if (failed) {
    process.stderr.write(failed.output);
    console.error(`migrating ${failed.app} failed`);
    process.exit(1);
  }
  console.log('migrations applied');
}
