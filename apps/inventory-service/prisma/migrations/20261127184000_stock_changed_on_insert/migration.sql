-- stock.changed, completed. The trigger of 20261124070651_domain_events fired only on UPDATE OF
-- available, so a SKU created already below the low-stock threshold (PUT /v1/stock-levels/{sku}
-- or SetStock of a new SKU, an INSERT) recorded nothing until its stock moved across the
-- threshold. It also gave events v4 ids, where every other outbox row has a UUIDv7
-- (libs/ids), and its comment said the relay checks the data against the event's schema: it does
-- not. Nothing checks it before publishing; consumers check it on receipt (fromCloudEventJson
-- in libs/events), and inventory's tests check that what this trigger writes passes that check.

-- A UUIDv7 (RFC 9562), as libs/ids makes them: 48 bits of Unix milliseconds, then version 7,
-- then the random bits of a v4 (whose variant bits are already those of v7). Within one
-- millisecond the order of two ids is random, unlike libs/ids: the outbox orders by position.
CREATE FUNCTION new_uuid_v7() RETURNS uuid AS $$
DECLARE
  bytes bytea := uuid_send(gen_random_uuid());
BEGIN
  bytes := overlay(bytes PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6);
  bytes := set_byte(bytes, 6, (get_byte(bytes, 6) & 15) | 112);
  RETURN encode(bytes, 'hex')::uuid;
END $$ LANGUAGE plpgsql VOLATILE;

-- stock.changed (libs/events): when a SKU's available stock crosses the low-stock threshold, in
-- either direction, or a SKU is created below it, the transaction that did it records the event,
-- whichever path did it (Reserve, ReserveOrder, Release, SetStock, AdjustStock, a batch, REST's
-- PUT /stock-levels/{sku}). A SKU created at or above the threshold records nothing: it is not low.
CREATE OR REPLACE FUNCTION record_stock_changed() RETURNS trigger AS $$
DECLARE
  threshold CONSTANT integer := 10;
  next_sequence integer;
BEGIN
  IF TG_OP = 'INSERT' AND NEW.available >= threshold THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.available < threshold) = (NEW.available < threshold) THEN
    RETURN NEW;
  END IF;
  INSERT INTO event_sequences (aggregate_type, aggregate_id, last_sequence) VALUES ('stock', NEW.sku, 1)
    ON CONFLICT (aggregate_type, aggregate_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
    RETURNING last_sequence INTO next_sequence;
  INSERT INTO outbox_events (id, type, aggregate_type, aggregate_id, sequence, data)
    VALUES (new_uuid_v7(), 'stock.changed', 'stock', NEW.sku, next_sequence,
      jsonb_build_object('sku', NEW.sku, 'available', NEW.available, 'reserved', NEW.reserved, 'lowStockThreshold', threshold, 'low', NEW.available < threshold));
  PERFORM pg_notify('outbox_events', '');
  RETURN NEW;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER stock_changed_event_on_insert AFTER INSERT ON stock FOR EACH ROW EXECUTE FUNCTION record_stock_changed();
