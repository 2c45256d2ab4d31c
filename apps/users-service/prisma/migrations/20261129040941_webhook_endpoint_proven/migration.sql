-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "proven_at" TIMESTAMPTZ(3);

-- Endpoints that have answered before are proven from their first success on.
UPDATE "webhook_endpoints" e SET "proven_at" = first.at
FROM (
  SELECT d."endpoint_id", min(a."attempted_at") AS at
  FROM "webhook_attempts" a JOIN "webhook_deliveries" d ON d."id" = a."delivery_id"
  WHERE a."outcome" = 'SUCCEEDED'
  GROUP BY d."endpoint_id"
) first
WHERE first."endpoint_id" = e."id";
