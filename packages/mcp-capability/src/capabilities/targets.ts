import { z } from "zod";
import { defineCapability } from "./capability.js";

export const targets = defineCapability({
  action: "targets",
  summary: "Where you can start a remote session: whether your cloud worker is available and which desktops are online.",
  keywords: ["where", "available", "desktops", "machines", "cloud", "runners", "computers"],
  write: false,
  args: z.strictObject({
    includeModels: z.boolean().optional().describe("Also list each target's models where the target reports them (OpenWork's argument)."),
  }),
  run: async (env) => {
    const cloud = env.targets.find((t) => t.name === "cloud");
    const desktop = env.targets.find((t) => t.name === "desktop");
    const desktops = desktop ? ((await desktop.availability(env.call)).machines ?? []) : [];
    return {
      cloud: { available: cloud ? (await cloud.availability(env.call)).available : false },
      desktops: desktops.map((d) => ({ computerId: d.runnerId, name: d.name, platform: d.platform, online: d.online, lastSeenAt: d.lastSeenAt })),
    };
  },
});
