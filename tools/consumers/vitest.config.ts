import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "consumers",
    include: ["src/**/*.test.ts"],
    globalSetup: ["../test-postgres/src/global-setup.ts"],
    hookTimeout: 90_000,
    testTimeout: 90_000,
  },
});
