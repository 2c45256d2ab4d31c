-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "put_backs" INTEGER NOT NULL DEFAULT 0;
