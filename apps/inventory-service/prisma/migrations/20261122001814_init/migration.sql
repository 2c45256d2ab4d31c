-- CreateEnum
CREATE TYPE "ReservationStatus" AS ENUM ('RESERVED', 'RELEASED');

-- CreateTable
CREATE TABLE "stock" (
    "sku" VARCHAR(64) NOT NULL,
    "available" INTEGER NOT NULL,
    "reserved" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_pkey" PRIMARY KEY ("sku")
);

-- CreateTable
CREATE TABLE "reservations" (
    "id" UUID NOT NULL,
    "order_id" VARCHAR(100) NOT NULL,
    "sku" VARCHAR(64) NOT NULL,
    "quantity" INTEGER NOT NULL,
    "status" "ReservationStatus" NOT NULL DEFAULT 'RESERVED',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "released_at" TIMESTAMPTZ(3),

    CONSTRAINT "reservations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "reservations_order_id_sku_key" ON "reservations"("order_id", "sku");

-- Never oversell, whatever a caller does: stock cannot go below zero.
-- (Prisma does not model CHECK constraints and leaves them out of its diffs.)
ALTER TABLE "stock" ADD CONSTRAINT "stock_available_not_negative" CHECK ("available" >= 0);
ALTER TABLE "stock" ADD CONSTRAINT "stock_reserved_not_negative" CHECK ("reserved" >= 0);
