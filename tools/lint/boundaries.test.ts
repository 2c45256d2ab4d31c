// The lint rules that hold the boundaries (eslint.config.cjs). Prisma stays behind the repositories: a service, route
// or representation importing the generated client or @prisma/* fails lint; a repository and
// an app's database.ts may.
// And gateway code stays in the gateway: @platform/graphql-gateway is scope:gateway, out of a service's reach.
import path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../..');
// The repository's own config, handed over as an object: jest cannot import() it the way ESLint loads it.
const eslint = new ESLint({ cwd: root, overrideConfigFile: true, baseConfig: require(path.join(root, 'eslint.config.cjs')) });

/** The messages of the Prisma rule for `code` as if it were the file at `file`. */
async function prismaViolations(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result.messages.filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

const generatedModel = "import type { Product } from '../generated/prisma/client';\nexport type Shown = Product;\n";
const prismaRuntime = "import type { Decimal } from '@prisma/client/runtime/client';\nexport type Money = Decimal;\n";

describe('Prisma types stay in repositories', () => {
  it('fails a service that imports a generated model', async () => {
    expect(await prismaViolations('apps/catalog-service/src/products/service.ts', generatedModel)).toEqual([expect.stringContaining('Prisma types stay in repository.ts')]);
  });

  it('fails a representation that imports from @prisma/*', async () => {
    expect(await prismaViolations('apps/catalog-service/src/products/representation.ts', prismaRuntime)).toEqual([expect.stringContaining('Prisma types stay in repository.ts')]);
  });

  it('fails an app.ts and a library outside libs/db', async () => {
    expect(await prismaViolations('apps/orders-service/src/app.ts', "import type { PrismaClient } from './generated/prisma/client';\nexport type Db = PrismaClient;\n")).toHaveLength(1);
    expect(await prismaViolations('libs/paging/src/page.ts', prismaRuntime)).toHaveLength(1);
  });

  it('lets a repository, an app database.ts and libs/db import them', async () => {
    expect(await prismaViolations('apps/catalog-service/src/products/repository.ts', generatedModel)).toEqual([]);
    expect(await prismaViolations('apps/catalog-service/src/database.ts', "import { PrismaClient } from './generated/prisma/client';\nexport type DatabaseClient = PrismaClient;\n")).toEqual([]);
    expect(await prismaViolations('libs/db/src/errors.ts', prismaRuntime)).toEqual([]);
  });
});

describe('gateway code stays in the gateway', () => {
  it('fails a subgraph service that imports @platform/graphql-gateway', async () => {
    const [result] = await eslint.lintText("import { createFederatedGraph } from '@platform/graphql-gateway';\nexport const graph = createFederatedGraph;\n", { filePath: path.join(root, 'apps/users-service/src/app.ts') });
    expect(result.messages.filter((message) => message.ruleId === '@nx/enforce-module-boundaries').map((message) => message.message)).toEqual([expect.stringContaining('can only depend on libs tagged with "scope:users", "scope:shared"')]);
  });
});
