// The deprecation registry's webhook entries (contracts/deprecations.yaml: `webhook:<type>`, or
// `webhook:<type> body.data.<field>`) applied to what one delivery sends. A receiver's reading of
// a payload cannot be recorded, so it is told in the delivery itself, as the gateway tells a
// REST caller in the answer: `Deprecation`, `Sunset` and `Link` headers on every delivery that
// carries a deprecated field or is of a deprecated event type. In a brownout of a field, and from
// its sunset day on, the field is left out of the payload (as a deprecated response field is),
// so a receiver that still reads it finds out before the field is removed from the contract.
import { type Deprecation, deprecationHeaders, phaseAt } from '@platform/deprecations';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The steps of a registry body path (`.data.items[].sku` → data, items, [], sku). */
function stepsOf(path: string): string[] {
  return (path.match(/\.[^.[\]]+|\[\]/g) ?? []).map((step) => (step === '[]' ? step : step.slice(1)));
}

/**
 * Finds the field `steps` names in `node` (every element of a list on `[]`); `remove` deletes it
 * where found. Answers whether it was there anywhere.
 */
function visit(node: unknown, steps: readonly string[], remove: boolean): boolean {
  const [step, ...rest] = steps;
  if (step === '[]') return Array.isArray(node) && node.map((item) => visit(item, rest, remove)).some(Boolean);
  if (!isObject(node) || !(step in node)) return false;
  if (rest.length > 0) return visit(node[step], rest, remove);
  if (remove) delete node[step];
  return true;
}

/**
 * The payload of a delivery of `type` as sent at `at` (deprecated fields in a brownout or past
 * their sunset left out; `payload` itself is not changed), and the deprecation headers it carries.
 */
export function applyPayloadDeprecations(entries: readonly Deprecation[], type: string, payload: Json, at: Date): { payload: Json; headers: Record<string, string> } {
  const element = `webhook:${type}`;
  const concerned = entries.filter((entry) => entry.element === element || entry.element.startsWith(`${element} body.`));
  if (concerned.length === 0) return { payload, headers: {} };
  const sent = structuredClone(payload);
  const announced: Deprecation[] = [];
  for (const entry of concerned) {
    if (entry.element === element) {
      announced.push(entry);
      continue;
    }
    const steps = stepsOf(entry.element.slice(`${element} body`.length));
    const phase = phaseAt(entry, at);
    if (phase === 'brownout' || phase === 'sunset') visit(sent, steps, true);
    else if (visit(sent, steps, false)) announced.push(entry);
  }
  return { payload: sent, headers: announced.length ? deprecationHeaders(announced) : {} };
}
