/**
 * OpenWork's simple token scorer: +5 for a query word equal to a word of the name, +3 for a
 * prefix of one, +2 for a word of the summary, +1 for an extra keyword. An empty query scores 1.
 */
export function scoreMatch(query: string, candidate: { name: string; summary: string; keywords: readonly string[] }): number {
  const words = query.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  if (words.length === 0) return 1;
  const nameWords = candidate.name.toLowerCase().split(/[^a-z0-9]+|(?=[A-Z])/).concat(candidate.name.toLowerCase().replace(/[^a-z]/g, " ").split(" ")).filter(Boolean);
  const summaryWords = new Set(candidate.summary.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean));
  const keywords = new Set(candidate.keywords.map((k) => k.toLowerCase()));
  let score = 0;
  for (const word of words) {
    if (nameWords.includes(word)) score += 5;
    else if (nameWords.some((n) => n.startsWith(word))) score += 3;
    if (summaryWords.has(word)) score += 2;
    if (keywords.has(word)) score += 1;
  }
  return score;
}
