// The repository resolves modules the node10 way, which does not read package.json `exports`,
// so the type of PGlite's contrib entry point is declared here (at run time Node, Jest and
// esbuild resolve it through `exports` to dist/contrib/pg_trgm.cjs).
declare module '@electric-sql/pglite/contrib/pg_trgm' {
  import type { Extension } from '@electric-sql/pglite';
  export const pg_trgm: Extension;
}
