-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "leased_until" TIMESTAMPTZ(3);
