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

-- stock.changed (libs/events): when a SKU's available stock crosses the low-stock threshold, in
-- either direction, the transaction that moved it records the event, whichever path moved it
-- (Reserve, ReserveOrder, Release, SetStock, AdjustStock, a batch). The relay checks the data
-- against the event's schema before publishing it.
CREATE FUNCTION record_stock_changed() RETURNS trigger AS $$
DECLARE
  threshold CONSTANT integer := 10;
  next_sequence integer;
BEGIN
  IF (OLD.available < threshold) = (NEW.available < threshold) THEN
    RETURN NEW;
  END IF;
  INSERT INTO event_sequences (aggregate_type, aggregate_id, last_sequence) VALUES ('stock', NEW.sku, 1)
    ON CONFLICT (aggregate_type, aggregate_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
    RETURNING last_sequence INTO next_sequence;
  INSERT INTO outbox_events (id, type, aggregate_type, aggregate_id, sequence, data)
    VALUES (gen_random_uuid(), 'stock.changed', 'stock', NEW.sku, next_sequence,
      jsonb_build_object('sku', NEW.sku, 'available', NEW.available, 'reserved', NEW.reserved, 'lowStockThreshold', threshold, 'low', NEW.available < threshold));
  PERFORM pg_notify('outbox_events', '');
  RETURN NEW;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER stock_changed_event AFTER UPDATE OF available ON stock FOR EACH ROW EXECUTE FUNCTION record_stock_changed();
