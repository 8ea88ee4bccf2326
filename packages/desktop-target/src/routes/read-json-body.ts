import { storableJson, BodyTooLarge, readBodyWithin } from "@openwork/remote-session-core/internal";
import { LIMITS } from "@openwork/runner-protocol";
import { ChannelRefusal } from "../channel-refusal.js";

/**
 * Reads a JSON request body of at most LIMITS.bodyBytes. An empty body reads as `{}` (claim has
 * none). Refuses oversize bodies without reading them whole, and anything that is not JSON. Every
 * string comes back storable (NUL and lone surrogates replaced): content never causes a 5xx.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const bytes = await readBodyWithin(request, LIMITS.bodyBytes).catch((error: unknown) => {
    throw error instanceof BodyTooLarge ? new ChannelRefusal("payload_too_large", error.message) : error;
  });
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return storableJson(JSON.parse(text));
  } catch {
    throw new ChannelRefusal("invalid_request", "the request body is not JSON");
  }
}
