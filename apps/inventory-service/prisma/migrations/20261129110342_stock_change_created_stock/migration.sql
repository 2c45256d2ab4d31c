-- Whether a stock change inserted its SKU's row, kept with the change so that a replay of
-- PUT /v1/stock-levels/{sku} (same Idempotency-Key) answers 201 and Location as the first did.
-- AlterTable
ALTER TABLE "stock_changes" ADD COLUMN     "created_stock" BOOLEAN NOT NULL DEFAULT false;
