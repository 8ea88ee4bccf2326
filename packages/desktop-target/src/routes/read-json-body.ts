import { storableJson } from "@openwork/remote-session-core/target";
import { LIMITS } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";

/**
 * Reads a JSON request body of at most LIMITS.bodyBytes. An empty body reads as `{}` (claim has
 * none). Refuses oversize bodies without reading them whole, and anything that is not JSON. Every
 * string comes back storable (NUL and lone surrogates replaced): content never causes a 5xx.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > LIMITS.bodyBytes) throw new ChannelRefusal("payload_too_large", `bodies are limited to ${LIMITS.bodyBytes} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > LIMITS.bodyBytes) throw new ChannelRefusal("payload_too_large", `bodies are limited to ${LIMITS.bodyBytes} bytes`);
      chunks.push(chunk);
    }
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return storableJson(JSON.parse(text));
  } catch {
    throw new ChannelRefusal("invalid_request", "the request body is not JSON");
  }
}
