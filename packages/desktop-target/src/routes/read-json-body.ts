import { storableJson } from "@openwork/remote-session-core/target";
import { LIMITS } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";

/**
 * Reads a JSON request body of at most LIMITS.bodyBytes. An empty body reads as `{}` (claim has
 * none). Refuses oversize bodies without reading them whole, and anything that is not JSON. Every
 * string comes back storable (NUL and lone surrogates replaced): content never causes a 5xx.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = request.headers.get("content-length");
  const length = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
  if (length !== null && length > LIMITS.bodyBytes) throw tooLarge();
  // A well-formed declared length bounds what node's HTTP parser reads, so such a body is read
  // whole: on @hono/node-server that reads the socket directly, with no web Request and stream
  // built for it (the runners' requests all declare one). Any other body (chunked, or a length
  // that is not a number) is counted as it streams; both are checked again once read.
  const bytes = length === null ? await readCounted(request.body) : new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > LIMITS.bodyBytes) throw tooLarge();
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return storableJson(JSON.parse(text));
  } catch {
    throw new ChannelRefusal("invalid_request", "the request body is not JSON");
  }
}

/** A body of unknown length, refused as soon as it passes LIMITS.bodyBytes. */
async function readCounted(body: ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body) {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > LIMITS.bodyBytes) throw tooLarge();
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks);
}

const tooLarge = () => new ChannelRefusal("payload_too_large", `bodies are limited to ${LIMITS.bodyBytes} bytes`);
