/**
 * Compiling small user programs in tests: the TypeScript compiler API with the repository's options, files held
 * in memory under this package (so "pulumi-posthog" resolves through package.json "exports" to dist/ types).
 */
import { join } from "node:path";
import ts from "typescript";
import { repoRoot } from "../provider/harness";
import { undocumentedProperties } from "./hover";

/** The repository's compiler options (tsconfig.json: strict, exactOptionalPropertyTypes, nodenext…). */
export function compilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(repoRoot, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!parsed) throw new Error("tsconfig.json did not parse");
  return { ...parsed.options, noEmit: true };
}

/**
 * Compiles `programs` (name → source) as files of a user's CommonJS program inside this package (so
 * "pulumi-posthog" resolves to the built types); returns each one's diagnostics as `line: message`, with the
 * text the diagnostic points at.
 */
export function compile(
  programs: Record<string, string>,
  dir = join(repoRoot, "test", "docs", "__virtual__"),
) {
  const files = new Map(Object.entries(programs).map(([name, text]) => [join(dir, `${name}.ts`), text]));
  const opts = compilerOptions();
  const host = ts.createCompilerHost(opts);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, lang, ...rest) => {
    const text = files.get(fileName);
    return text !== undefined
      ? ts.createSourceFile(fileName, text, lang, true)
      : getSourceFile(fileName, lang, ...rest);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => files.has(fileName) || fileExists(fileName);
  const readFile = host.readFile.bind(host);
  host.readFile = (fileName) => files.get(fileName) ?? readFile(fileName);
  const program = ts.createProgram([...files.keys()], opts, host);
  const out: Record<string, { message: string; at: string }[]> = {};
  for (const [file, name] of [...files.keys()].map((f, i) => [f, Object.keys(programs)[i] ?? ""] as const)) {
    const sf = program.getSourceFile(file);
    if (!sf) throw new Error(`${file} did not load`);
    out[name] = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)].map((d) => {
      const line = d.start !== undefined ? sf.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
      return {
        message: `${line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
        at: d.start !== undefined && d.length !== undefined ? sf.text.slice(d.start, d.start + d.length) : "",
      };
    });
  }
  return out;
}

/**
 * Type-checks the ```ts blocks `blocks` of the docs in one {@link compile} run, each as a module of its own (`export
 * {}` appended, so two blocks never share top-level names): each block's diagnostics, keyed by `page:line` (its first
 * code line), as `page:line: TS<code> <message>` with the line of the page. An empty list: the block compiles.
 */
export function blockDiagnostics(
  blocks: readonly { page: string; line: number; code: string }[],
): Map<string, string[]> {
  const programs = new Map(
    blocks.map((b) => [`blocks/${b.page.replace(/[^\w]+/g, "_")}_${b.line}`, b] as const),
  );
  const results = compile(
    Object.fromEntries([...programs].map(([name, b]) => [name, `${b.code}\nexport {};\n`])),
  );
  return new Map(
    [...programs].map(([name, b]) => {
      const diagnostics = results[name];
      if (!diagnostics) throw new Error(`${b.page}:${b.line} was not compiled`);
      return [
        `${b.page}:${b.line}`,
        diagnostics.map((d) => {
          const [line, ...rest] = d.message.split(": ");
          return `${b.page}:${b.line + Number(line) - 1}: ${rest.join(": ")}`;
        }),
      ];
    }),
  );
}

/**
 * What an editor shows on hover for each property of the type aliases that `text` declares, compiled as the file
 * `file` (held in memory) with `options`: the properties with no documentation (`Alias.property`), how many
 * properties were seen, the file's semantic diagnostics, and the names of the files the program loaded.
 */
export function hoverDocumentation(file: string, text: string, options: ts.CompilerOptions) {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (f, l, ...rest) =>
    f === file ? ts.createSourceFile(f, text, l, true) : getSourceFile(f, l, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (f) => f === file || fileExists(f);
  const program = ts.createProgram([file], options, host);
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(file);
  if (!sf) throw new Error(`${file} did not load`);
  const diagnostics = program
    .getSemanticDiagnostics(sf)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  const { missing, seen } = undocumentedProperties(ts, checker, sf);
  return { missing, seen, diagnostics, files: program.getSourceFiles().map((s) => s.fileName) };
}
