/**
 * TxSender's way to the node: a real anvil behind a small HTTP relay that holds each
 * eth_sendRawTransaction a moment and counts how many are at the node at once. The setup
 * transactions must arrive one after another, in nonce order (out of order, anvil once left a run
 * of them in its pool, never mined), and all be mined.
 */
import http from 'node:http';
import { JsonRpcProvider, Transaction } from 'ethers';
import { AnvilNode } from '../src/anvil-node';
import { deployerWallet } from '../src/devnet-keys';
import { findFreePort } from '../src/free-port';
import { TxSender } from '../src/tx-sender';

jest.setTimeout(60_000);

const CHAIN = 8453;
const HOLD_MS = 20;

let node: AnvilNode;
let relay: http.Server;
let relayUrl: string;
/** The nonces of the raw transactions, in the order they reached the relay. */
const arrived: number[] = [];
let inFlight = 0;
let mostInFlight = 0;

beforeAll(async () => {
  node = await AnvilNode.start({ chainId: CHAIN, port: await findFreePort(), blockIntervalMs: 1_000 });
  relay = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const request = JSON.parse(body) as { method: string; params?: string[] };
      const raw = request.method === 'eth_sendRawTransaction';
      if (raw) {
        arrived.push(Transaction.from(request.params![0]!).nonce);
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        await new Promise((r) => setTimeout(r, HOLD_MS));
      }
      const answer = await fetch(node.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      if (raw) inFlight--;
      res.setHeader('content-type', 'application/json');
      res.end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => relay?.close(resolve));
  await node?.kill();
});

it('behavior: the transactions reach the node one at a time, in nonce order, and are all mined', async () => {
  const provider = new JsonRpcProvider(relayUrl, CHAIN, { staticNetwork: true, batchMaxCount: 1 });
  const wallet = deployerWallet().connect(provider);
  const sender = new TxSender(wallet, provider, CHAIN, 0);
  for (let i = 0; i < 12; i++) sender.call(wallet.address, '0x');
  await sender.confirmAll();

  expect(arrived).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  expect(mostInFlight).toBe(1);
  expect(await provider.getTransactionCount(wallet.address, 'latest')).toBe(12);
  provider.destroy();
});
