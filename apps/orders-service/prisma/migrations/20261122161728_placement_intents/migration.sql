-- AlterTable
ALTER TABLE "pending_releases" ADD COLUMN     "placement_deadline" TIMESTAMPTZ(3);
