/** Shapes of the `GET /v2/price` body (spec section 2.4). */

export interface OrderbookLevel {
  /** Quote token per base token, exact decimal string. */
  price: string;
  /** Base token quantity in human units, exact decimal string. */
  amount: string;
}

export interface PairOrderbook {
  baseToken: string;
  quoteToken: string;
  /** Best (highest) price first. */
  bids: OrderbookLevel[];
  /** Best (lowest) price first. */
  asks: OrderbookLevel[];
}

export interface OrderbookResponse {
  chainId: number;
  blockNumber: number;
  /** Unix seconds of the block. */
  blockTime: number;
  pairs: PairOrderbook[];
}
