import type ts from "typescript";

/**
 * What an editor shows on hover for each property of the type aliases that `file` declares, read from a type-checked
 * program's `checker`: the properties with no documentation comment (`Alias.property`) and how many properties were
 * seen. `tsc` is the TypeScript module the program was made with (this checkout's, or a user's project's own); this
 * module loads none itself.
 */
export function undocumentedProperties(
  tsc: typeof ts,
  checker: ts.TypeChecker,
  file: ts.SourceFile,
): { missing: string[]; seen: number } {
  const missing: string[] = [];
  let seen = 0;
  for (const st of file.statements) {
    if (!tsc.isTypeAliasDeclaration(st)) continue;
    const type = checker.getTypeAtLocation(st.name);
    const members = type.isUnion()
      ? type.types.flatMap((t) => checker.getPropertiesOfType(t))
      : checker.getPropertiesOfType(type);
    for (const p of members) {
      seen++;
      if (tsc.displayPartsToString(p.getDocumentationComment(checker)).trim() === "")
        missing.push(`${st.name.text}.${p.name}`);
    }
  }
  return { missing, seen };
}
