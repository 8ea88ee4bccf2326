import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "package-check",
    include: ["src/**/*.test.ts"],
    testTimeout: 120_000,
  },
});
