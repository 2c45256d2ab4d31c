-- AlterEnum
ALTER TYPE "ReservationStatus" ADD VALUE 'FULFILLED';

-- AlterTable
ALTER TABLE "reservations" ADD COLUMN     "fulfilled_at" TIMESTAMPTZ(3);
