/**
 * How a JSON-RPC round trip to a node is made and read (core's node-http.ts postToNode, on
 * node:http): against a real local HTTP server that answers as a node, or as a hostile one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeAnswerTooLarge, NodeRedirectError, postToNode } from '@pmm/core';

let server: Server;
let url: string;
let answer: (req: IncomingMessage, body: string, res: ServerResponse) => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => answer(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('postToNode', () => {
  it('behavior: POSTs the body as JSON and reads the whole answer, on one kept-alive connection', async () => {
    const ports = new Set<number>();
    answer = (req, body, res) => {
      ports.add(req.socket.remotePort!);
      expect(req.method).toBe('POST');
      expect(req.headers['content-type']).toBe('application/json');
      res.end(body.toUpperCase());
    };
    for (let i = 0; i < 3; i++)
      expect(await postToNode(url, '{"id":1}', { maxBytes: 1_000 })).toEqual({ status: 200, text: '{"ID":1}' });
    expect(ports.size).toBe(1);
  });

  it('security: a redirect is not followed: NodeRedirectError, nothing sent to its target', async () => {
    const paths: string[] = [];
    answer = (req, _body, res) => {
      paths.push(req.url!);
      res.writeHead(307, { location: `${url}internal` });
      res.end();
    };
    await expect(postToNode(url, '{}', { maxBytes: 1_000 })).rejects.toBeInstanceOf(NodeRedirectError);
    expect(paths).toEqual(['/']);
  });

  it('security: an answer past maxBytes is not read whole, whether its length is declared or streamed', async () => {
    answer = (_req, _body, res) => res.end('x'.repeat(2_000));
    await expect(postToNode(url, '{}', { maxBytes: 1_000 })).rejects.toBeInstanceOf(NodeAnswerTooLarge);
    // Chunked, no Content-Length: cut once the bytes read pass the bound.
    answer = (_req, _body, res) => {
      res.write('x'.repeat(800));
      setTimeout(() => res.end('x'.repeat(800)), 20);
    };
    await expect(postToNode(url, '{}', { maxBytes: 1_000 })).rejects.toBeInstanceOf(NodeAnswerTooLarge);
  });

  it("behavior: an HTTP error's body is read only when asked (readErrors)", async () => {
    answer = (_req, _body, res) => {
      res.writeHead(500);
      res.end('{"error":{"code":-32000,"message":"down"}}');
    };
    expect(await postToNode(url, '{}', { maxBytes: 1_000 })).toEqual({ status: 500, text: '' });
    expect(await postToNode(url, '{}', { maxBytes: 1_000, readErrors: true })).toEqual({
      status: 500,
      text: '{"error":{"code":-32000,"message":"down"}}',
    });
  });

  it('behavior: an aborted request rejects at once, its connection dropped', async () => {
    answer = () => undefined; // never answers
    const controller = new AbortController();
    const sent = postToNode(url, '{}', { maxBytes: 1_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(sent).rejects.toMatchObject({ name: 'AbortError' });
  });
});
