import path from 'node:path';
import { defineConfig } from 'prisma/config';

// Prisma's CLI downloads a Rust schema engine; this machine class cannot. Our WASM stand-in
// speaks the same protocol. Set PRISMA_SCHEMA_ENGINE_BINARY= (empty) for stock Prisma behaviour.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.resolve(__dirname, '../../tools/prisma-engine/schema-engine.mjs');

export default defineConfig({
  schema: path.join(__dirname, 'prisma/schema.prisma'),
  migrations: { path: path.join(__dirname, 'prisma/migrations') },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/orders_dev' },
});
