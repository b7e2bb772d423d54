/**
 * The import cycles among the project's own modules, read with the TypeScript compiler's parser (so `import type`,
 * `export … from`, `import()` and `require()` are all seen, and comments and strings are not): every static or
 * dynamic edge to another file of the project, type-only ones included, outside node_modules/, dist/ and test/.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

const SKIP = new Set(['node_modules', 'dist', 'test', 'coverage', '.git']);

export function projectFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (SKIP.has(e.name) || e.name.startsWith('.')) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ts$/.test(e.name) && !/\.(d|test)\.ts$/.test(e.name)) out.push(p);
    }
  };
  walk(root);
  return out.sort();
}

/** The module specifiers a file imports, each with whether only types come through it. */
export function importsOf(file: string): { spec: string; typeOnly: boolean }[] {
  const src = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: { spec: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const e = node.moduleReference.expression;
      if (ts.isStringLiteral(e)) out.push({ spec: e.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0]!)) {
      const dynamic = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const required = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (dynamic || required) out.push({ spec: (node.arguments[0] as ts.StringLiteral).text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true }); // `typeof import('…')`
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return out;
}

/** The project file a relative specifier names, or null (a package, or a file outside the analysis). */
function resolve(from: string, spec: string, known: Set<string>): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, `${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts')]) if (known.has(c)) return c;
  return null;
}

/** The import graph: file → the project files it imports (type-only imports included). */
export function importGraph(root: string): Map<string, Set<string>> {
  const files = projectFiles(root);
  const known = new Set(files);
  const graph = new Map<string, Set<string>>();
  for (const f of files) {
    const to = new Set<string>();
    for (const { spec } of importsOf(f)) {
      const target = resolve(f, spec, known);
      if (target && target !== f) to.add(target);
    }
    graph.set(f, to);
  }
  return graph;
}

/** The cycles: strongly connected components of more than one file (Tarjan), as sorted paths relative to `root`. */
export function importCycles(root: string): string[][] {
  const graph = importGraph(root);
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(path.relative(root, w));
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
