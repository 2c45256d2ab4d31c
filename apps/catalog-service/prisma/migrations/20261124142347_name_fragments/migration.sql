-- AlterTable
ALTER TABLE "products" ADD COLUMN     "name_fragments" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- Backfill: each existing product's lower-cased one- and two-character pieces of its name, as the
-- application writes them (libs/db keyword.ts), before the index is built.
UPDATE "products" SET "name_fragments" = ARRAY(
  SELECT DISTINCT substr(lower("name"), start, width)
  FROM generate_series(1, length("name")) AS start, (VALUES (1), (2)) AS widths(width)
  WHERE start + width - 1 <= length("name")
);

-- CreateIndex
CREATE INDEX "products_name_fragments_idx" ON "products" USING GIN ("name_fragments");
