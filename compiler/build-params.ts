/**
 * Build parameters: `${NAME}`, `${NAME:-default}` and `${NAME:?message}` in the string scalars of a build.yaml,
 * resolved from `--param NAME=VALUE` over the environment (vero's loader rules: an empty value counts as unset).
 * Substituted in the parsed document, never in the raw text, so a value cannot inject YAML structure; an unquoted
 * scalar's result is read as a YAML scalar (so `max_concurrency: ${N:-8}` is the number 8), a quoted one stays a
 * string. Every unresolved placeholder is reported with its file:line:column, all at once.
 */
import { Document, LineCounter, parse as parseYaml, parseDocument, Scalar, visit } from 'yaml';

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}/g;

export type BuildParams = Record<string, string>;

/** `NAME=VALUE` flags into a map; a malformed one is an error naming it. */
export function parseParamFlags(flags: string[]): { params: BuildParams; errors: string[] } {
  const params: BuildParams = {};
  const errors: string[] = [];
  for (const f of flags) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(f);
    if (m) params[m[1]!] = m[2]!;
    else errors.push(`--param ${f}: expected NAME=VALUE (NAME of letters, digits and _)`);
  }
  return { params, errors };
}

/** Substitutes every placeholder in `doc` in place; returns the problems (file:line:col: message). */
export function substituteParams(
  { doc, lines, text }: { doc: Document; lines: LineCounter; text: string },
  file: string,
  params: BuildParams,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const errors: string[] = [];
  const lookup = (name: string) => (params[name] !== undefined && params[name] !== '' ? params[name] : env[name] || undefined);
  visit(doc, {
    Scalar(_key, node: Scalar) {
      if (typeof node.value !== 'string' || !node.value.includes('${')) return;
      const start = node.range?.[0] ?? 0;
      const position = (placeholder: string) => {
        const at = node.range ? text.slice(start, node.range[1]).indexOf(placeholder) : 0;
        const { line, col } = lines.linePos(start + Math.max(0, at));
        return `${file}:${line}:${col}`;
      };
      const replaced = node.value.replace(PLACEHOLDER, (whole, name: string, op?: string, arg?: string) => {
        const value = lookup(name);
        if (value !== undefined) return value;
        if (op === '-') return arg ?? '';
        errors.push(
          op === '?'
            ? `${position(whole)}: required build parameter ${name} is unset: ${arg || 'no message provided'}`
            : `${position(whole)}: build parameter ${name} is unset; pass --param ${name}=VALUE or set the environment variable`,
        );
        return whole;
      });
      if (replaced === node.value) return;
      node.value = node.type === Scalar.PLAIN ? plainValue(replaced) : replaced;
    },
  });
  return errors;
}

/** An unquoted scalar's substituted text, read as YAML would have read it (a number, a boolean, null, or a string). */
function plainValue(text: string): unknown {
  if (/[\n:#{}[\],&*!|>'"%@`]/.test(text) || text.trim() !== text) return text;
  try {
    const v: unknown = parseYaml(text);
    return typeof v === 'number' || typeof v === 'boolean' || v === null ? v : text;
  } catch {
    return text;
  }
}

/** Parses YAML text keeping what placeholder positions need (the source text and its line starts). */
export function parseWithPositions(text: string): { doc: Document; lines: LineCounter; text: string } {
  const lines = new LineCounter();
  return { doc: parseDocument(text, { lineCounter: lines }), lines, text };
}

/**
 * `--param` names the build file's text never uses as `${NAME}` (a misspelt name would otherwise be ignored in
 * silence): one problem each, naming the parameters the file has.
 */
export function paramsNotInFile(file: string, text: string, params: BuildParams): string[] {
  const used = new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!));
  const known = used.size ? [...used].sort().join(', ') : 'none';
  return Object.keys(params)
    .filter((name) => !used.has(name))
    .map((name) => `--param ${name}: ${file} has no \${${name}} (its parameters: ${known})`);
}
