import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { expect, it } from "vitest";

// What an Electron main process bundles from `@openwork/runner-protocol/client`: the runner side
// only. Minting and verifying (node:crypto, the signing secret's handling) stay the gateway's.
it("bundles the client entry without server code or node:crypto", async () => {
  const entry = fileURLToPath(new URL("./client.ts", import.meta.url));
  const result = await build({ entryPoints: [entry], bundle: true, platform: "node", format: "esm", write: false, metafile: true, logLevel: "silent" });
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs.some((input) => input.endsWith("src/client/runner-client.ts"))).toBe(true);
  expect(inputs.filter((input) => /src\/v1\/token\.ts$|src\/testing\//.test(input))).toEqual([]);
  const code = result.outputFiles[0]!.text;
  expect(code).not.toMatch(/node:crypto|from "crypto"|createHmac|timingSafeEqual/);
  expect(code).not.toMatch(/function (mintRunnerToken|verifyRunnerToken)\b/);
});

it("keeps the main entry (the wire contract, shared by both sides) free of server code as well", async () => {
  const entry = fileURLToPath(new URL("./index.ts", import.meta.url));
  const result = await build({ entryPoints: [entry], bundle: true, platform: "node", format: "esm", write: false, logLevel: "silent" });
  expect(result.outputFiles[0]!.text).not.toMatch(/node:crypto|createHmac|function (mintRunnerToken|verifyRunnerToken|runRunner)\b/);
});
