import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "test-postgres",
    include: ["src/**/*.test.ts"],
    globalSetup: ["./src/global-setup.ts"],
    hookTimeout: 60_000,
  },
});
