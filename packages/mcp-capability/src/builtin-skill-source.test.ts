import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createBuiltinSkillSource, REMOTE_SESSIONS_SKILL } from "./builtin-skill-source.js";
import { ALL_SOURCES } from "./registry-context.js";

const skillFile = fileURLToPath(new URL("../skills/remote-sessions/SKILL.md", import.meta.url));
const source = createBuiltinSkillSource();
const ctx = { sourceFilter: ALL_SOURCES };

describe("the remote-sessions skill as a den-api built-in skill", () => {
  it("serves the package's SKILL.md, embedded by the build as it is on disk", async () => {
    const { renderText } = (await import(new URL("../../../scripts/embed-text.mjs", import.meta.url).href)) as {
      renderText(file: string, exportName: string, shownAs: string): string;
    };
    const generated = readFileSync(new URL("./remote-sessions-skill.generated.ts", import.meta.url), "utf8");
    expect(generated).toBe(renderText(skillFile, "REMOTE_SESSIONS_SKILL_MD", "skills/remote-sessions/SKILL.md"));
    expect(REMOTE_SESSIONS_SKILL.source).toBe(readFileSync(skillFile, "utf8"));
    // The frontmatter names it as den-api's descriptor does.
    expect(REMOTE_SESSIONS_SKILL.source).toMatch(/^---\nname: remote-sessions\ndescription: \|\n/);
  });

  it("is found for the hand-off a member asks for, with den-api's built-in skill match", async () => {
    for (const query of ["how do I hand work to my desktop", "send this to my web chat", "run this on my desktop"]) {
      expect(await source.search(ctx, query, 5)).toEqual([
        {
          name: "skill:remote-sessions",
          method: "SKILL",
          path: "skill://remote-sessions/SKILL.md",
          score: expect.any(Number),
          summary: REMOTE_SESSIONS_SKILL.descriptor.description,
          pathParams: [],
          queryParams: [],
          hasBody: false,
          kind: "skill",
        },
      ]);
    }
    // Only when skills are searched, and never for an empty query or an unrelated one.
    expect(await source.search({ sourceFilter: { ...ALL_SOURCES, skills: false } }, "hand work to my desktop", 5)).toEqual([]);
    expect(await source.search(ctx, "", 5)).toEqual([]);
    expect(await source.search(ctx, "invoice", 5)).toEqual([]);
  });

  it("runs as skill:remote-sessions, answering den-api's skill payload in one text part, and refuses other skill names", async () => {
    expect(source.parseName("skill:remote-sessions")).toEqual({ kind: "builtinSkill", name: "skill:remote-sessions" });
    expect(source.parseName("skill:")).toBeNull();
    expect(source.parseName("remote-session:create")).toBeNull();
    await expect(source.enumerate()).resolves.toEqual([]);

    const result = await source.execute(null, { name: "skill:remote-sessions" }, { name: "skill:remote-sessions" });
    expect(result.isError).toBeUndefined();
    expect(result).not.toHaveProperty("structuredContent");
    expect(result.content).toHaveLength(1);
    expect(JSON.parse(result.content[0]!.text)).toEqual({
      kind: "skill",
      name: "Remote Sessions",
      description: REMOTE_SESSIONS_SKILL.descriptor.description,
      provenance: expect.any(String),
      content: readFileSync(skillFile, "utf8"),
    });

    const unknown = await source.execute(null, { name: "skill:nope" }, { name: "skill:nope" });
    expect(unknown).toEqual({ isError: true, content: [{ type: "text", text: expect.stringContaining('"error":"unknown_capability"') }] });
  });
});
