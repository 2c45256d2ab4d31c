-- CreateEnum
CREATE TYPE "PendingStockCall" AS ENUM ('RELEASE', 'FULFIL');

-- AlterTable
ALTER TABLE "pending_releases" ADD COLUMN     "call" "PendingStockCall" NOT NULL DEFAULT 'RELEASE';
