-- DropIndex
DROP INDEX "orders_status_stock_released_at_idx";

-- AlterTable
ALTER TABLE "orders" DROP COLUMN "stock_released_at";

-- CreateTable
CREATE TABLE "pending_releases" (
    "reservation_key" VARCHAR(100) NOT NULL,
    "reason" VARCHAR(200) NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pending_releases_pkey" PRIMARY KEY ("reservation_key")
);
