export { asDate, covers, loadDeprecations, readDeprecations, type Brownout, type Deprecation } from './registry';
