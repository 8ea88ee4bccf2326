import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A webhook receiver in this process answering 200 at once: `next` resolves with the time the next POST ended. */
export async function startReceiver() {
  let arrived: (at: number) => void = () => {};
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      arrived(performance.now());
      response.writeHead(200).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    next: () => new Promise<number>((resolve) => (arrived = resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
