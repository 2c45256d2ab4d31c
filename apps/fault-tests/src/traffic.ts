// Client traffic for the fault cases: calls through this case's gateway that record what a
// client saw (the recording client and the bounded load are @platform/test-kit's).
import { door } from '@platform/test-kit';
import { gatewayUrl } from './fault-stack';

export { type Answer, between, brief, tally, Traffic } from '@platform/test-kit';

export const call = door(gatewayUrl);
