export {
  InventoryClient,
  InventoryService,
  ReleaseReply,
  ReleaseRequest,
  ReserveReply,
  ReserveRequest,
  type InventoryServer,
} from './generated/inventory/v1/inventory';
export { createInventoryClient, toApiError, type InventoryClientOptions, type InventoryGateway } from './client';
export { fileDescriptorProtos } from './descriptors';
