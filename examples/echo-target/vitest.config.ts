import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "echo-target",
    include: ["src/**/*.test.ts"],
    globalSetup: ["../../tools/test-postgres/src/global-setup.ts"],
    hookTimeout: 60_000,
  },
});
