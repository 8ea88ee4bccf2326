/**
 * A scripted agent that knows nothing of remote sessions but what the skill's text says: it reads
 * the skill's fast-path table (when → capability → body), picks the create row whose quoted
 * phrases the request contains, fills the body's placeholders, then follows each answer's `next`
 * until a read says the turn is over (`idle`, or `failed` / `interrupted` / `expired`), as the
 * skill's loop says. A wrong name, body or rule in the skill fails the hand-off.
 */
export async function handOff(
  skill: string,
  request: string,
  execute: (name: string, body: Record<string, unknown>) => Promise<Record<string, unknown>>,
): Promise<{ created: Record<string, unknown>; final: Record<string, unknown>; calls: string[] }> {
  const row = chooseRow(fastPath(skill), request);
  const work = request.includes(": ") ? request.slice(request.indexOf(": ") + 2) : request;
  const body = JSON.parse(fill(row.body, { "<a short title>": work.slice(0, 40), "<the work, in full>": work })) as Record<string, unknown>;
  const calls = [row.capability];
  const created = await execute(row.capability, body);
  let answer = created;
  for (let step = 0; step < 60; step++) {
    if (step > 0 && ENDED.has(String(answer.state))) return { created, final: answer, calls };
    const next = answer.next as { name: string; body: Record<string, unknown> } | undefined;
    if (!next) throw new Error(`the answer to ${calls.at(-1)} names no next step and the turn is ${String(answer.state)}`);
    calls.push(next.name);
    answer = await execute(next.name, next.body);
  }
  throw new Error(`the turn never ended: ${calls.length} calls`);
}

// The skill's loop: a read in one of these states ends the turn.
const ENDED = new Set(["idle", "failed", "interrupted", "expired"]);

interface FastPathRow {
  when: string;
  capability: string;
  body: string;
}

/** The rows of the skill's "Fast path" table whose capability and body are literal (in backticks). */
function fastPath(skill: string): FastPathRow[] {
  const section = skill.split(/^## /m).find((part) => part.startsWith("Fast path"));
  if (!section) throw new Error("the skill has no Fast path section");
  return section.split("\n").flatMap((line) => {
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    const capability = /^`([a-z-]+:[a-z]+)`$/.exec(cells[1] ?? "")?.[1];
    const body = /^`(\{.*\})`$/.exec(cells[2] ?? "")?.[1];
    return cells.length === 3 && capability && body ? [{ when: cells[0]!, capability, body }] : [];
  });
}

/** The create row with the most of its quoted phrases in the request. */
function chooseRow(rows: FastPathRow[], request: string): FastPathRow {
  const said = request.toLowerCase();
  const scored = rows
    .filter((row) => row.capability.endsWith(":create"))
    .map((row) => ({ row, hits: [...row.when.matchAll(/"([^"]+)"/g)].filter((m) => said.includes(m[1]!.toLowerCase())).length }))
    .sort((a, b) => b.hits - a.hits);
  if (!scored[0] || scored[0].hits === 0) throw new Error(`no fast-path row matches "${request}"`);
  return scored[0].row;
}

/** Replaces each placeholder inside the JSON template with the value as a JSON string's content. */
function fill(template: string, values: Record<string, string>): string {
  return Object.entries(values).reduce((text, [placeholder, value]) => text.replaceAll(placeholder, JSON.stringify(value).slice(1, -1)), template);
}
