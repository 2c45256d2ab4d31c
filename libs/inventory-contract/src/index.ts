export {
  AdjustStockReply,
  AdjustStockRequest,
  FulfilReply,
  FulfilRequest,
  GetStockReply,
  GetStockRequest,
  InventoryClient,
  InventoryService,
  ReleaseReply,
  ReleaseRequest,
  ReserveError,
  ReserveLine,
  ReserveOrderReply,
  ReserveReply,
  ReserveRequest,
  SetStockReply,
  SetStockRequest,
  StockLevel,
  WatchStockRequest,
  type InventoryServer,
} from './generated/inventory/v1/inventory';
export { createInventoryClient, failureOf, type InventoryClientOptions, type InventoryGateway } from './client';
export { DOMAIN_ERROR_METADATA, fromGrpcStatus, REFUSED_SKUS_METADATA, toGrpcStatus } from './grpc-errors';
export { fileDescriptorProtos } from './descriptors';
