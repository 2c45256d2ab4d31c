-- SetStock/AdjustStock idempotency (stock_changes) and WatchStock's change feed (version + NOTIFY).

-- CreateEnum
CREATE TYPE "StockChangeKind" AS ENUM ('SET', 'ADJUST');

-- AlterTable
ALTER TABLE "stock" ADD COLUMN     "version" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "stock_changes" (
    "request_id" VARCHAR(100) NOT NULL,
    "sku" VARCHAR(64) NOT NULL,
    "kind" "StockChangeKind" NOT NULL,
    "amount" INTEGER NOT NULL,
    "reason" VARCHAR(200),
    "on_hand_after" INTEGER NOT NULL,
    "reserved_after" INTEGER NOT NULL,
    "available_after" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_changes_pkey" PRIMARY KEY ("request_id")
);

-- CreateIndex
CREATE INDEX "stock_changes_sku_created_at_idx" ON "stock_changes"("sku", "created_at");

-- Every change of a stock row, whatever statement or replica makes it, raises the row's version
-- and is announced on the channel `stock_levels`. PostgreSQL delivers notifications at commit, in
-- commit order, to every listening connection (one per replica: WatchStock). A rolled-back change
-- announces nothing. (Prisma does not model functions or triggers and leaves them out of its diffs.)
CREATE FUNCTION "stock_level_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    NEW.version := OLD.version + 1;
  END IF;
  PERFORM pg_notify('stock_levels', json_build_object('sku', NEW.sku, 'available', NEW.available, 'reserved', NEW.reserved, 'version', NEW.version)::text);
  RETURN NEW;
END
$$;

CREATE TRIGGER "stock_level_changed" BEFORE INSERT OR UPDATE ON "stock"
  FOR EACH ROW EXECUTE FUNCTION "stock_level_changed"();
