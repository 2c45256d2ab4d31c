export { asDate, brownoutEnd, covers, deprecationHeaders, goneMessage, loadDeprecations, phaseAt, readDeprecations, registrySetting, type Brownout, type Deprecation, type Phase } from './registry';
