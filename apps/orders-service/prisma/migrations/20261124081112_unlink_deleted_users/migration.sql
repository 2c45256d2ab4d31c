-- AlterTable
ALTER TABLE "orders" ALTER COLUMN "user_id" DROP NOT NULL;
