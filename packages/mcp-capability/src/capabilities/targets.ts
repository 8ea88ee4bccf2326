import { z } from "zod";
import { declaredFields } from "../target-declarations.js";
import { openworkTargets } from "../openwork-dialect.js";
import { defineCapability } from "./capability.js";

export const targets = defineCapability({
  action: "targets",
  summary: "Where you can start a remote session: each target (your cloud worker, your desktops…), whether it is available, and its machines.",
  keywords: ["where", "available", "desktops", "machines", "cloud", "runners", "computers"],
  write: false,
  args: z.strictObject({
    includeModels: z.boolean().optional().describe("Also list each target's models where the target reports them (OpenWork's argument)."),
  }),
  run: async (env) => {
    const offered = await env.catalog.offered(env.call);
    const fallback = env.catalog.defaultOf(offered);
    return {
      targets: offered.map(({ target, availability }) => ({
        name: target.name,
        label: target.label,
        available: availability.available,
        default: target.name === fallback,
        ...declaredFields(target, "targets", availability.fields),
      })),
      ...openworkTargets(offered),
    };
  },
});
