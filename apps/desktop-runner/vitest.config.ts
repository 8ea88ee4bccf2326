import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "desktop-runner",
    include: ["src/**/*.test.ts"],
    globalSetup: ["../../tools/test-postgres/src/global-setup.ts"],
    hookTimeout: 60_000,
    testTimeout: 60_000,
  },
});
