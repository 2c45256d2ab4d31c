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

-- CreateTable
CREATE TABLE "processed_events" (
    "source" VARCHAR(100) NOT NULL,
    "aggregate_type" VARCHAR(50) NOT NULL,
    "aggregate_id" VARCHAR(100) NOT NULL,
    "last_sequence" INTEGER NOT NULL,
    "last_event_id" UUID NOT NULL,
    "handled_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "processed_events_pkey" PRIMARY KEY ("source","aggregate_type","aggregate_id")
);

-- CreateTable
CREATE TABLE "event_cursors" (
    "source" VARCHAR(100) NOT NULL,
    "position" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_cursors_pkey" PRIMARY KEY ("source")
);

-- CreateTable
CREATE TABLE "dead_letter_events" (
    "id" UUID NOT NULL,
    "source" VARCHAR(100) NOT NULL,
    "type" VARCHAR(100) NOT NULL,
    "event" JSONB NOT NULL,
    "error" VARCHAR(2000) NOT NULL,
    "attempts" INTEGER NOT NULL,
    "parked_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "replayed_at" TIMESTAMPTZ(3),

    CONSTRAINT "dead_letter_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_id_key" ON "outbox_events"("id");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_log_position_key" ON "outbox_events"("log_position");

-- CreateIndex
CREATE INDEX "outbox_events_published_at_position_idx" ON "outbox_events"("published_at", "position");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_aggregate_type_aggregate_id_sequence_key" ON "outbox_events"("aggregate_type", "aggregate_id", "sequence");

-- CreateIndex
CREATE INDEX "dead_letter_events_parked_at_idx" ON "dead_letter_events"("parked_at");
