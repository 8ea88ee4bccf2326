/**
 * The SQL a codebase sends, read from its TypeScript: every template literal (postgres.js tagged
 * templates and their fragments), as its static parts. Used to tell the packages' statements in
 * pg_stat_statements from the ones tests send to look at rows.
 */
export interface SqlTemplate {
  file: string;
  /** The text between the template's `${…}` holes. */
  parts: string[];
}

/** Every template literal in `source`, nested ones (fragments inside `${…}`) included. */
export function templatesIn(file: string, source: string): SqlTemplate[] {
  const found: SqlTemplate[] = [];
  let i = 0;
  const skipQuoted = (quote: string) => {
    for (i++; i < source.length && source[i] !== quote; i++) if (source[i] === "\\") i++;
    i++;
  };
  const skipComment = () => {
    if (source[i + 1] === "/") i = source.indexOf("\n", i) < 0 ? source.length : source.indexOf("\n", i);
    else i = source.indexOf("*/", i + 2) < 0 ? source.length : source.indexOf("*/", i + 2) + 2;
  };
  // A `/` where an expression starts opens a regular expression literal (whose quotes are not strings).
  const startsRegex = () => /(?:^|[(,=:[!&|?{};]|\breturn)\s*$/.test(source.slice(Math.max(0, i - 12), i));
  const skipRegex = () => {
    for (i++; i < source.length && source[i] !== "/" && source[i] !== "\n"; i++) {
      if (source[i] === "\\") i++;
      else if (source[i] === "[") while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
    }
    i++;
  };
  // Reads code until the `}` closing a `${` (nested), or to the end of the file.
  const code = (nested: boolean) => {
    let depth = 0;
    while (i < source.length) {
      const c = source[i]!;
      if (c === "'" || c === '"') skipQuoted(c);
      else if (c === "/" && (source[i + 1] === "/" || source[i + 1] === "*")) skipComment();
      else if (c === "/" && startsRegex()) skipRegex();
      else if (c === "`") template();
      else {
        i++;
        if (c === "{") depth++;
        if (c === "}" && --depth < 0 && nested) return;
      }
    }
  };
  const template = () => {
    const parts: string[] = [];
    let current = "";
    for (i++; i < source.length && source[i] !== "`"; ) {
      if (source[i] === "\\") {
        current += source[i + 1];
        i += 2;
      } else if (source[i] === "$" && source[i + 1] === "{") {
        parts.push(current);
        current = "";
        i += 2;
        code(true);
      } else current += source[i++];
    }
    i++;
    parts.push(current);
    found.push({ file, parts });
  };
  code(false);
  return found;
}

const LITERAL = /'(?:[^']|'')*'/g;
const NUMBER = /\b\d+(?:\.\d+)?\b/g;
const KEYWORD_CONSTANT = /\b(?:true|false|null)\b/gi;

/**
 * A pattern matching the statements a template sends as pg_stat_statements records them: holes
 * are parameters or inlined fragments, and constants may appear as `$n` (it normalizes them).
 */
export function patternOf(template: SqlTemplate): RegExp {
  const marks = ["\u0001", "\u0002", "\u0003", "\u0004"] as const;
  const pieces = template.parts.map((part) =>
    part
      .replace(LITERAL, marks[0])
      .replace(NUMBER, marks[1])
      .replace(KEYWORD_CONSTANT, marks[2])
      // PostgreSQL 18 records a list of constants as one: `in ($1 /*, ... */)`.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: \u0001-\u0003 are the marks this file puts in place of constants
      .replace(/\((?:\s*[\u0001-\u0003]\s*,)+\s*[\u0001-\u0003]\s*\)/g, marks[3])
      .trim()
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      .replace(/\s+/g, "\\s*")
      .replaceAll(marks[0], "(?:\\$\\d+|'(?:[^']|'')*')")
      .replaceAll(marks[1], "(?:\\$\\d+|\\d+(?:\\.\\d+)?)")
      .replaceAll(marks[2], "(?:\\$\\d+|true|false|null)")
      .replaceAll(marks[3], "\\([^()]*\\)"),
  );
  return new RegExp(`^\\s*${pieces.join("[\\s\\S]*?")}\\s*$`, "i");
}
