const tokens = (text: string) => text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);

/**
 * OpenWork's token scorer (openwork-wire §4.4): per query word, +5 if it equals a word of the
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
