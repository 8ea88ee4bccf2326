import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "tools/*", "examples/*"],
    reporters: ["default", "./scripts/count-reporter.ts"],
  },
});
