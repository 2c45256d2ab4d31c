// What the contract gate reports: one line per change to a released contract, with its class and
// the rule of the API specification (§Versioning) it falls under.

export type ContractKind = 'rest' | 'graphql' | 'proto';
/** breaking fails the gate unless allowed; dangerous is reported (a meaning change or a new response value needs a changelog entry); safe is reported. */
export type ChangeClass = 'breaking' | 'dangerous' | 'safe';

export interface ContractChange {
  kind: ContractKind;
  class: ChangeClass;
  /** The element, as the registry and approvals name it: `rest:GET /v1/orders query.size`, `graphql:Shipment.trackingNumber`, `proto:inventory.v1.ReserveRequest.sku`. */
  element: string;
  /** A stable rule id (ours, or the library's: graphql-inspector's change type, buf's rule). */
  rule: string;
  /** The specification's rule, in words. */
  spec: string;
  message: string;
  /** Which contract file the change was seen in (several SDLs carry the same GraphQL element). */
  source?: string;
  /** REST: the same element named by the shared schema it lives in (`rest:#/components/schemas/Problem.code`), which many operations answer. */
  alias?: string;
  /** What the change must also do before an approval or a completed replacement lets it pass (proto: reserve a removed field's number and name). */
  unmet?: string;
  /**
   * REST, an alternative (anyOf/oneOf) no alternative takes any more: what keeps the nearest from
   * taking it, named inside that alternative (`... request.body.payment<kind=card>.brand`). Approvals of
   * every one of them allow the change, as one of the whole element does.
   */
  within?: { element: string; alias?: string; rule: string }[];
}

export const specRule = {
  compatible: '§Versioning 1: an old client keeps working unchanged',
  nonBreaking: '§Versioning 2: non-breaking (adding a response field, an optional parameter, an endpoint, an error code)',
  removed: '§Versioning 3: removing or renaming a field',
  typeChanged: "§Versioning 3: changing a field's type",
  numberString: '§Versioning 3: changing a field between number and string',
  meaning: "§Versioning 3: changing a field's meaning (needs a changelog entry)",
  requiredParameter: '§Versioning 3: adding a required request parameter',
  pathOrMethod: '§Versioning 3: changing a path or method',
  tighterRequest: '§Versioning 1 and 3: a request an old client sends is refused (tighter constraint)',
  defaultChanged: '§Versioning 1 and 3: a default changed (what an old client gets without asking changes)',
  nullableResponse: "§Versioning 3: changing a field's type (a response field may now be null)",
  removedError: '§Versioning 1 and 3: a status or error code an old client handles is removed',
  newResponseValue: '§Versioning 1: a new value in a response enum, a response value outside its old limits, or a new type a union or interface may answer (old clients must tolerate unknown values; needs a changelog entry)',
  newMajor: '§Versioning 5: a new major version next to the old one',
  narrowerAccess: '§Versioning 1: a call an old client makes is refused (who may call it, or the API-key scope it needs, narrowed)',
} as const;

export function change(kind: ContractKind, cls: ChangeClass, element: string, rule: string, spec: string, message: string): ContractChange {
  return { kind, class: cls, element, rule, spec, message };
}

const classOrder: Record<ChangeClass, number> = { breaking: 0, dangerous: 1, safe: 2 };

/** Breaking first, then by element, so the output reads the same on every run. */
export function sortChanges(changes: ContractChange[]): ContractChange[] {
  return [...changes].sort(
    (a, b) => classOrder[a.class] - classOrder[b.class] || a.element.localeCompare(b.element) || a.rule.localeCompare(b.rule) || (a.source ?? '').localeCompare(b.source ?? ''),
  );
}
