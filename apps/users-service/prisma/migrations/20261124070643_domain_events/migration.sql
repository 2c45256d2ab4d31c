-- CreateTable
CREATE TABLE "outbox_events" (
    "position" BIGSERIAL NOT NULL,
    "id" UUID NOT NULL,
    "type" VARCHAR(100) NOT NULL,
    "aggregate_type" VARCHAR(50) NOT NULL,
    "aggregate_id" VARCHAR(100) NOT NULL,
    "sequence" INTEGER NOT NULL,
    "data" JSONB NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),
    "log_position" BIGINT,

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("position")
);

-- CreateTable
CREATE TABLE "event_sequences" (
    "aggregate_type" VARCHAR(50) NOT NULL,
    "aggregate_id" VARCHAR(100) NOT NULL,
    "last_sequence" INTEGER NOT NULL,

    CONSTRAINT "event_sequences_pkey" PRIMARY KEY ("aggregate_type","aggregate_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_id_key" ON "outbox_events"("id");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_log_position_key" ON "outbox_events"("log_position");

-- CreateIndex
CREATE INDEX "outbox_events_published_at_position_idx" ON "outbox_events"("published_at", "position");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_aggregate_type_aggregate_id_sequence_key" ON "outbox_events"("aggregate_type", "aggregate_id", "sequence");
