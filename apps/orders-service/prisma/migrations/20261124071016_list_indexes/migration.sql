-- DropIndex
DROP INDEX "orders_amount_id_idx";

-- DropIndex
DROP INDEX "orders_created_at_id_idx";

-- DropIndex
DROP INDEX "orders_user_id_amount_id_idx";

-- DropIndex
DROP INDEX "orders_user_id_created_at_id_idx";

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "product_names" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "name_fragments" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- Backfill: each existing order's item names, one a line, and their lower-cased one- and
-- two-character pieces, as the application writes them.
UPDATE "orders" AS o SET "product_names" = names.joined, "name_fragments" = names.fragments
FROM (
  SELECT i."order_id", string_agg(i."product_name", E'\n' ORDER BY i."id") AS joined,
         (SELECT array_agg(DISTINCT substr(lower(j."product_name"), start, width))
            FROM "order_items" AS j, generate_series(1, length(j."product_name")) AS start, (VALUES (1), (2)) AS widths(width)
           WHERE j."order_id" = i."order_id" AND start + width - 1 <= length(j."product_name")) AS fragments
  FROM "order_items" AS i GROUP BY i."order_id"
) AS names
WHERE names."order_id" = o."id";

-- Trigram operator classes for the GIN index below (PGlite loads the extension's bundle in libs/db).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- CreateIndex
CREATE INDEX "orders_created_at_id_status_amount_user_id_coupon_code_idx" ON "orders"("created_at" DESC, "id" DESC, "status", "amount", "user_id", "coupon_code");

-- CreateIndex
CREATE INDEX "orders_user_id_created_at_id_status_amount_coupon_code_idx" ON "orders"("user_id", "created_at" DESC, "id" DESC, "status", "amount", "coupon_code");

-- CreateIndex
CREATE INDEX "orders_amount_id_status_created_at_user_id_coupon_code_idx" ON "orders"("amount", "id", "status", "created_at", "user_id", "coupon_code");

-- CreateIndex
CREATE INDEX "orders_user_id_amount_id_status_created_at_coupon_code_idx" ON "orders"("user_id", "amount", "id", "status", "created_at", "coupon_code");

-- CreateIndex
CREATE INDEX "orders_product_names_idx" ON "orders" USING GIN ("product_names" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "orders_name_fragments_idx" ON "orders" USING GIN ("name_fragments");
