import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "session-notify",
    include: ["src/**/*.test.ts"],
    globalSetup: ["../../tools/test-postgres/src/global-setup.ts"],
    hookTimeout: 60_000,
    testTimeout: 20_000,
  },
});
