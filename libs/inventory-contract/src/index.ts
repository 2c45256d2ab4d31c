export {
  AdjustStockReply,
  AdjustStockRequest,
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
export { createInventoryClient, REFUSED_SKUS_METADATA, toApiError, type InventoryClientOptions, type InventoryGateway, type ReserveOrderResult } from './client';
export { fileDescriptorProtos } from './descriptors';
