import { MCP_BODY_BYTES, readBodyWithin } from "./read-body-within.js";

/**
 * The JSON body of a POST, read from a copy (the request stays readable for whoever answers it)
 * and no further than MCP_BODY_BYTES; undefined when there is none, it is not JSON, or it is
 * longer (whoever reads the request itself answers those: 413, a parse error).
 */
export async function peekJsonBody(request: Request): Promise<unknown> {
  if (request.method !== "POST" || !request.body) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(await readBodyWithin(request.clone(), MCP_BODY_BYTES)));
  } catch {
    return undefined;
  }
}
