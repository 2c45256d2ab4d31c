-- AlterTable
ALTER TABLE "reviews" ALTER COLUMN "user_id" DROP NOT NULL;
