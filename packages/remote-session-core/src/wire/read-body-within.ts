/** A request body longer than its route takes: answer 413 and close the connection. */
export class BodyTooLarge extends Error {
  readonly code = "payload_too_large";
  constructor(readonly limitBytes: number) {
    super(`bodies are limited to ${limitBytes} bytes`);
    this.name = "BodyTooLarge";
  }
}

/**
 * The largest MCP request body a gateway reads: a create with the longest prompt
 * (SESSION_LIMITS.prompt characters, at most 6 bytes each as JSON escapes them) fits.
 */
export const MCP_BODY_BYTES = 1_048_576;

/**
 * The headers of a 413: the body's unread rest is not drained, so the connection ends with the
 * answer instead of waiting on a sender TCP holds back.
 */
export const BODY_TOO_LARGE_HEADERS: Readonly<Record<string, string>> = { connection: "close" };

/**
 * Reads a request's body, at most `limitBytes`, whoever sends it and however it is framed. A
 * declared length past the limit is refused before a byte is read; any other body (chunked, or
 * a length that is not a number) is counted as it streams and refused as soon as it passes the
 * limit, the rest left unread: memory stays at the limit. Throws BodyTooLarge.
 */
export async function readBodyWithin(request: Request, limitBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const length = declaredLength(request);
  if (length !== null && length > limitBytes) throw new BodyTooLarge(limitBytes);
  // A well-formed declared length bounds what node's HTTP parser reads, so such a body is read
  // whole: on @hono/node-server that reads the socket directly, with no web stream built for it.
  const bytes = length !== null ? new Uint8Array(await request.arrayBuffer()) : await readCounted(request.body, limitBytes);
  // Checked again once read: a Request built in-process may declare any length.
  if (bytes.byteLength > limitBytes) throw new BodyTooLarge(limitBytes);
  return bytes;
}

/**
 * The same request with its body read (at most `limitBytes`, else BodyTooLarge), for a handler
 * that reads bodies whole and unbounded itself (an MCP SDK transport).
 */
export async function withBodyWithin(request: Request, limitBytes: number): Promise<Request> {
  if (request.body === null) return request;
  const body = await readBodyWithin(request, limitBytes);
  const headers = new Headers(request.headers);
  headers.delete("transfer-encoding");
  headers.set("content-length", String(body.byteLength));
  return new Request(request, { body, headers });
}

function declaredLength(request: Request): number | null {
  const declared = request.headers.get("content-length");
  return declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
}

async function readCounted(body: ReadableStream<Uint8Array> | null, limitBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limitBytes) throw new BodyTooLarge(limitBytes);
      chunks.push(value);
    }
  } finally {
    // Not cancelled: on node a cancelled request body destroys the socket before the 413 is
    // written. Left unread, the client is held by TCP's backpressure until the answer's
    // `connection: close` ends the connection.
    reader.releaseLock();
  }
  const joined = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}
