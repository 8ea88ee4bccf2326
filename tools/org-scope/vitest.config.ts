import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "org-scope",
    include: ["src/**/*.test.ts"],
    globalSetup: ["../test-postgres/src/global-setup.ts"],
    // After every other project: it reads what their database suites sent.
    sequence: { groupOrder: 1 },
    hookTimeout: 60_000,
    testTimeout: 60_000,
  },
});
