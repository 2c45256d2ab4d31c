-- AlterTable: the lease of a replica on a producer's log (libs/events, embedded transport)
ALTER TABLE "event_cursors" ADD COLUMN     "leased_by" VARCHAR(200),
ADD COLUMN     "leased_until" TIMESTAMPTZ(3);
