export { asDate, brownoutEnd, covers, deprecationHeaders, goneMessage, loadDeprecations, phaseAt, readDeprecations, type Brownout, type Deprecation, type Phase } from './registry';
