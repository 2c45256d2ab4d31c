#!/usr/bin/env node
// Offline stand-in for Prisma's Rust `schema-engine` binary. The Prisma CLI spawns whatever
// PRISMA_SCHEMA_ENGINE_BINARY names and talks JSON-RPC to it over stdio; this executable answers
// with the official WASM build of the same engine (@prisma/schema-engine-wasm) on a
// @prisma/adapter-pg connection, so `migrate dev|deploy|diff|reset` and `db push` work on a
// machine that cannot download the binary. Only PostgreSQL is supported.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import readline from 'node:readline';

const require = createRequire(import.meta.url);

function parseArgs(argv) {
  const parsed = { datamodels: [], datasource: undefined, cliCommand: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--datamodels' || arg === '-d') parsed.datamodels.push(argv[++i]);
    else if (arg === '--datasource') parsed.datasource = JSON.parse(argv[++i]);
    else if (arg === '--enabled-preview-features' || arg === '--extension-types') i++;
    else if (arg === 'cli') parsed.cliCommand = argv[++i];
    else if (arg === '--version' || arg === '-V') parsed.cliCommand = 'version';
  }
  return parsed;
}

// Engine log lines go to stderr as JSON, the shape the CLI parses for error codes.
function logLine(level, message, extra = {}) {
  process.stderr.write(
    JSON.stringify({ timestamp: new Date().toISOString(), level, fields: { message, ...extra }, target: 'schema_engine::logger' }) + '\n',
  );
}

// adapter-pg cannot map PostgreSQL's `name` (oid 19) and `"char"` (oid 18) columns, which the
// engine's introspection queries return. Read both as text; remember which columns were
// `"char"`, because the engine reads those (e.g. constraint_type) as single characters.
const charColumnNames = new Set();
function readInternalTypesAsText() {
  const Result = require('pg/lib/result');
  const addFields = Result.prototype.addFields;
  Result.prototype.addFields = function (fields) {
    for (const field of fields) {
      if (field.dataTypeID === 18) charColumnNames.add(field.name);
      if (field.dataTypeID === 19 || field.dataTypeID === 18) field.dataTypeID = 25;
    }
    return addFields.call(this, fields);
  };
}

const CHARACTER_COLUMN_TYPE = 6; // ColumnTypeEnum.Character of @prisma/driver-adapter-utils

function withCharacterColumns(queryable) {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    result.columnNames.forEach((name, index) => {
      if (charColumnNames.has(name)) result.columnTypes[index] = CHARACTER_COLUMN_TYPE;
    });
    return result;
  };
  return queryable;
}

function databaseUrl(datasource) {
  const url = datasource?.url ?? process.env.DATABASE_URL;
  if (!url) throw new Error('No database URL: set datasource.url in prisma.config.ts or DATABASE_URL');
  return url;
}

async function runCliCommand(command, datasource) {
  if (command === 'version') {
    process.stdout.write('schema-engine-wasm-offline 7\n');
    return 0;
  }
  const pg = require('pg');
  const url = new URL(databaseUrl(datasource));
  const database = decodeURIComponent(url.pathname.slice(1));
  if (command === 'can-connect-to-database' || command === 'create-database') {
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      await client.end();
      return 0;
    } catch (error) {
      if (command === 'can-connect-to-database' || error.code !== '3D000') {
        logLine('ERROR', `Can't reach database: ${error.message}`, { error_code: error.code === '3D000' ? 'P1003' : 'P1001' });
        return 1;
      }
    }
    const admin = new URL(url);
    admin.pathname = '/postgres';
    const adminClient = new pg.Client({ connectionString: admin.toString() });
    await adminClient.connect();
    await adminClient.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
    await adminClient.end();
    return 0;
  }
  logLine('ERROR', `Unsupported cli command: ${command}`);
  return 1;
}

// The WASM engine reports a Rust panic's message here before it throws (Prisma's CLI host
// defines the same global).
globalThis.PRISMA_WASM_PANIC_REGISTRY = {
  set_message(message) {
    logLine('ERROR', `schema engine panic: ${message}`);
  },
};

async function loadEngineModule() {
  const bindings = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  const wasmPath = join(dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg')), 'schema_engine_bg.wasm');
  const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), { './schema_engine_bg.js': bindings });
  bindings.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  return bindings;
}

// adapter-pg splits a script at every `;`, which cuts a dollar-quoted function body (a trigger's
// plpgsql) apart. The Rust engine sends a migration script whole, as one simple query: so does this.
function withWholeScripts(connection) {
  connection.executeScript = async (script) => {
    try {
      await connection.client.query(script);
    } catch (error) {
      connection.onError(error);
    }
  };
  return connection;
}

async function serveJsonRpc({ datamodels, datasource }) {
  readInternalTypesAsText();
  const { SchemaEngine } = await loadEngineModule();
  const { PrismaPg } = require('@prisma/adapter-pg');
  const schemas = await Promise.all(datamodels.map(async (path) => [path, await readFile(path, 'utf8')]));
  // Parsed fields, not a connection string: the adapter opens its shadow database with
  // `{ ...config, database }`, and in `pg` a connectionString would override that database.
  const { parse } = require('pg-connection-string');
  const factory = new PrismaPg(parse(databaseUrl(datasource)));
  // adapter-pg drops the shadow database before it closes the pool connected to it, which
  // PostgreSQL refuses; dropping WITH (FORCE) ends that connection first.
  const connect = factory.connect.bind(factory);
  const connectToShadowDb = factory.connectToShadowDb.bind(factory);
  factory.connectToShadowDb = async () => withWholeScripts(withCharacterColumns(await connectToShadowDb()));
  factory.connect = async () => {
    const connection = withWholeScripts(withCharacterColumns(await connect()));
    const startTransaction = connection.startTransaction?.bind(connection);
    if (startTransaction) connection.startTransaction = async (...args) => withCharacterColumns(await startTransaction(...args));
    const executeScript = connection.executeScript.bind(connection);
    connection.executeScript = (script) => executeScript(script.replace(/^DROP DATABASE ("prisma_migrate_shadow_db_[^"]+")$/, 'DROP DATABASE $1 WITH (FORCE)'));
    return connection;
  };
  // The engine expects the Result-wrapped adapter shape that Prisma's own JS migrate path builds.
  const { bindMigrationAwareSqlAdapterFactory } = require('@prisma/driver-adapter-utils');
  const adapter = bindMigrationAwareSqlAdapterFactory(factory);
  engineStarted = true;
  const engine = await SchemaEngine.new({ datamodels: schemas.length ? schemas : undefined }, (log) => process.stderr.write(`${log}\n`), adapter);

  const pending = new Set();
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    const request = JSON.parse(line);
    if (!request.method) return; // the CLI's acknowledgement of a `print` we sent
    const call = (async () => {
      try {
        if (typeof engine[request.method] !== 'function') throw Object.assign(new Error(`Unknown method ${request.method}`), { code: -32601 });
        const result = await engine[request.method](request.params ?? {});
        // The Rust engine hands text meant for the user (diff scripts) to the CLI as a `print` call.
        if (request.method === 'diff' && result?.stdout) {
          process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: 1_000_000 + request.id, method: 'print', params: { content: result.stdout } }) + '\n');
        }
        process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: result ?? null }) + '\n');
      } catch (error) {
        const message = error?.message ?? String(error);
        process.stdout.write(
          JSON.stringify({
            jsonrpc: '2.0',
            id: request.id,
            error: { code: error?.code ?? 4466, message: 'An error happened. Check the data field for details.', data: { is_panic: false, message, error_code: error?.error_code ?? null, meta: error?.meta ?? null } },
          }) + '\n',
        );
      }
    })();
    pending.add(call);
    pendingRequests += 1;
    call.finally(() => {
      pending.delete(call);
      pendingRequests -= 1;
    });
  });
  lines.on('close', async () => {
    await Promise.allSettled([...pending]);
    process.exit(0);
  });
}

// The engine raises connector failures from inside WASM callbacks; report them as engine
// errors (the CLI prints `fields.message`) instead of a Node stack trace.
let pendingRequests = 0;
let engineStarted = false;
process.on('uncaughtException', (error) => {
  // 57P01: the shadow database's idle pool connection ended by our own DROP ... WITH (FORCE).
  if (error?.code === '57P01') return;
  // A late driver callback after every answer was sent cannot change any answer.
  if (pendingRequests === 0 && engineStarted) return;
  logLine('ERROR', error?.message ?? String(error), { stack: error?.stack });
  process.exit(1);
});

const args = parseArgs(process.argv.slice(2));
if (args.cliCommand) {
  process.exit(await runCliCommand(args.cliCommand, args.datasource));
} else {
  await serveJsonRpc(args);
}
