// The deprecation reports' answer, as the OpenAPI document describes it (tools/openapi).
import { z } from '@platform/validation';

export const deprecationCallerRepresentation = z.object({
  element: z.string().meta({ description: 'The element used: the registry entry\'s, or one it covers (an operation covers its parameters and fields).' }),
  caller: z.string().meta({ description: '`key:<id>`, `user:<id>`, `client:<name>/<version>`, `other` (past the daily cap of distinct callers) or `unidentified`.' }),
  client: z.string().meta({ description: 'The client name/version (X-Client-Name/X-Client-Version, else User-Agent), or `unknown`.' }),
  owner: z.string().nullable().meta({ description: 'For a key: its owner, `user:<id>` (the contact is that user\'s email).' }),
  contact: z.string().nullable().meta({ description: 'The email of the user behind the caller (a key\'s owner, or the user itself) in the admin report; null for other callers, in a caller\'s own report, or when users-service could not say.' }),
  calls1d: z.number().int().min(0).meta({ description: 'Calls today (UTC).' }),
  calls7d: z.number().int().min(0).meta({ description: 'Calls today and the 6 days before.' }),
  calls30d: z.number().int().min(0).meta({ description: 'Calls today and the 29 days before.' }),
  lastSeen: z.iso.datetime(),
});

export const deprecationUsageRepresentation = z.object({
  element: z.string().meta({ description: 'The deprecated element, e.g. `rest:GET /v1/orders query.offset`, `graphql:Shipment.trackingNumber`.' }),
  replacement: z.string(),
  announced: z.iso.date(),
  sunset: z.iso.date(),
  notice: z.string(),
  callers: z.array(deprecationCallerRepresentation),
});
