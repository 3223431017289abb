// The packed SDK from an ES module (sdk-package.test.ts): the book polled, then streamed.
// Prints one JSON line for the test.
import { readFileSync } from 'node:fs';
import { PmmApiError, PmmClient } from '@pmm/client';

const stack = JSON.parse(readFileSync(process.env.STACK_FILE, 'utf8'));
const client = new PmmClient({ baseUrl: stack.gateway.url, apiKey: stack.gateway.apiKey });

const polled = await client.getOrderbook(8453);
const streamed = await new Promise((resolve, reject) => {
  const blocks = [];
  const timer = setTimeout(() => reject(new Error(`only ${blocks.length} books in 20 s`)), 20_000);
  const sub = client.subscribeOrderbook(8453, (book) => {
    blocks.push(book.blockNumber);
    if (blocks.length === 3) {
      clearTimeout(timer);
      sub.close();
      sub.done.then(() => resolve(blocks));
    }
  });
});
const refused = await client.getOrderbook(999).catch((err) => err);
console.log(
  JSON.stringify({
    polledBlock: polled.blockNumber,
    pairs: polled.pairs.length,
    streamed,
    rateLimit: client.lastRateLimit,
    refused: { isPmmApiError: refused instanceof PmmApiError, status: refused.status, code: refused.code },
  }),
);
