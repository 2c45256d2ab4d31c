-- The stock row's version a stock change left, kept with the change so that a replay of
-- PUT /v1/stock-levels/{sku} (same Idempotency-Key) answers the level and ETag the first did.
-- AlterTable
ALTER TABLE "stock_changes" ADD COLUMN     "version_after" BIGINT;
