import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "opencode-client",
    include: ["src/**/*.test.ts"],
  },
});
