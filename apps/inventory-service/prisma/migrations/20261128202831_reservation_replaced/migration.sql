-- AlterEnum
ALTER TYPE "ReservationStatus" ADD VALUE 'REPLACED';

-- AlterTable
ALTER TABLE "reservations" ADD COLUMN     "handed_over" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "replaced_by" VARCHAR(100);

-- CreateIndex
CREATE INDEX "reservations_replaced_by_idx" ON "reservations"("replaced_by");
