// The demo catalog: one list, read by catalog-service (products) and inventory-service (stock)
// when their databases are empty, so both always agree on the SKUs.
export interface DemoProduct {
  sku: string;
  name: string;
  description: string;
  /** KRW, the smallest unit (KRW has no minor unit). */
  price: number;
  initialStock: number;
}

const items: [sku: string, name: string, description: string, price: number, stock: number][] = [
  ['KB-MECH-001', 'Mechanical Keyboard', 'Tenkeyless, brown switches, PBT keycaps.', 129_000, 120],
  ['MS-WL-002', 'Wireless Mouse', 'Silent clicks, 70 hours per charge.', 39_000, 300],
  ['MN-27-003', '27-inch Monitor', 'QHD IPS panel, 165 Hz.', 389_000, 40],
  ['HP-NC-004', 'Noise-Cancelling Headphones', 'Over-ear, 30 hours with ANC on.', 299_000, 60],
  ['CB-USBC-005', 'USB-C Cable 2 m', '100 W power delivery, braided.', 15_900, 1_000],
  ['DK-TB4-006', 'Thunderbolt Dock', 'Two displays, 96 W charging.', 349_000, 25],
  ['WC-4K-007', '4K Webcam', 'Auto-focus, privacy shutter.', 159_000, 80],
  ['MC-USB-008', 'USB Microphone', 'Cardioid condenser, gain knob.', 119_000, 70],
  ['LT-DESK-009', 'Desk Lamp', 'Dimmable LED with wireless charger base.', 59_000, 150],
  ['ST-LAP-010', 'Laptop Stand', 'Aluminium, six height steps.', 45_000, 200],
  ['BG-BP-011', 'Commuter Backpack', 'Water-resistant, 16-inch laptop sleeve.', 89_000, 90],
  ['SS-1TB-012', 'Portable SSD 1 TB', 'USB 3.2 Gen 2, 1,050 MB/s.', 139_000, 110],
  ['PB-20K-013', 'Power Bank 20,000 mAh', 'Two USB-C ports, 65 W.', 69_000, 130],
  ['SP-BT-014', 'Bluetooth Speaker', 'IP67, 12 hours of play.', 99_000, 85],
  ['CH-ERG-015', 'Ergonomic Chair', 'Mesh back, adjustable lumbar support.', 459_000, 15],
  ['MT-DESK-016', 'Desk Mat', '90 x 40 cm, stitched edges.', 25_000, 400],
  ['HB-USB-017', 'USB Hub', 'Four USB-A 3.0 ports.', 22_000, 250],
  ['EB-TWS-018', 'Wireless Earbuds', 'Active noise cancelling, wireless charging case.', 179_000, 100],
  ['TB-10-019', '10-inch Tablet', '128 GB, stylus support.', 499_000, 30],
  ['SW-FIT-020', 'Fitness Smartwatch', 'GPS, heart rate, 7-day battery.', 249_000, 50],
  ['CR-PD-021', '65 W Charger', 'GaN, two USB-C and one USB-A.', 49_000, 220],
  ['KB-WL-022', 'Wireless Keyboard', 'Low profile, multi-device.', 79_000, 140],
  ['FL-ST-023', 'Ring Light Stand', '26 cm ring, phone holder, tripod.', 35_000, 95],
  ['RT-WIFI-024', 'Wi-Fi 6 Router', 'Dual band, 4 gigabit ports.', 189_000, 45],
];

export const demoProducts: readonly DemoProduct[] = items.map(([sku, name, description, price, initialStock]) => ({ sku, name, description, price, initialStock }));

/** A stable picture address per product (served by any static host; only a URL here). */
export function demoImageUrl(sku: string): string {
  return `https://images.example.com/products/${sku.toLowerCase()}.jpg`;
}
