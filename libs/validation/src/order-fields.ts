// What an order may hold: checked where orders are written (orders-service's request schemas) and
// relied on where they are read (the gateway prices a query by how many lines an order can have).

/** The most lines (items) an order has: it is placed, and replaced, with 1 to this many. */
export const MAX_ORDER_ITEMS = 50;
