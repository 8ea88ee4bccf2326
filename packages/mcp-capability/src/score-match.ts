const tokens = (text: string) =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/**
 * OpenWork's token scorer, as den-api's registry ranks matches: per query word, +5 if it equals a word of the
 * name, else +3 if either is a prefix of the other; +2 if the summary has it; +1 if it is an
 * extra keyword. An empty query scores 0, so it matches nothing.
 */
export function scoreMatch(query: string, candidate: { name: string; summary: string; keywords: readonly string[] }): number {
  const nameWords = tokens(candidate.name);
  const summaryWords = new Set(tokens(candidate.summary));
  const keywords = new Set(candidate.keywords.map((k) => k.toLowerCase()));
  let score = 0;
  for (const word of tokens(query)) {
    if (nameWords.includes(word)) score += 5;
    else if (nameWords.some((n) => n.startsWith(word) || word.startsWith(n))) score += 3;
    if (summaryWords.has(word)) score += 2;
    if (keywords.has(word)) score += 1;
  }
  return score;
}

/** den-api's order of matches: by score, highest first, then by name. */
export const compareMatches = (a: { score: number; name: string }, b: { score: number; name: string }) => b.score - a.score || a.name.localeCompare(b.name);

/** A source's answer to a search, as den-api's sources cut it: scores above 0, in order, `limit` clamped to 1–20 (0 or absent: 5). */
export function rankMatches<T extends { score: number; name: string }>(matches: T[], limit: number): T[] {
  return matches
    .filter((match) => match.score > 0)
    .sort(compareMatches)
    .slice(0, Math.max(1, Math.min(20, Math.trunc(limit) || 5)));
}
