/**
 * What a contributor writes by hand for a new resource (CONTRIBUTING.md, "Adding a resource"), for
 * test/tools/add-resource.test.ts, which writes it into a temporary copy of the tree: PostHog's annotations, kept
 * minimal. The emulator's route (a new module and its line in the operations), the client's module (and its place in
 * the client), the card, and the card's line in the one list. The docs page's prose is the one hand part left out:
 * `npm run generate` writes a page with its generated parts and a line asking for the prose.
 */

/** A file the contributor adds: its path in the tree and its text. */
export interface HandFile {
  path: string;
  text: string;
}

/** An edit of an existing file: `insert` after the first occurrence of `after` (which must be there). */
export interface HandEdit {
  path: string;
  after: string;
  insert: string;
}

/** The emulator's route: create, retrieve and delete an annotation of a project, held beside the world. */
const ROUTE = `import { notFound } from "../errors";
import type { Operation } from "../runtime";
import { created, intParam, noContent, ok } from "./common";

const annotations = new Map<number, { id: number; content: string }>();
const one = (id: string | undefined) => {
  const a = annotations.get(intParam(id) ?? -1);
  if (!a) throw notFound();
  return a;
};
const ITEM = "/api/projects/:project_id/annotations/:id/";

export const annotationOperations: Operation[] = [
  {
    method: "POST",
    url: "/api/projects/:project_id/annotations/",
    scope: "annotation:write",
    parent: "project",
    handle: (ctx) => {
      const a = { id: annotations.size + 1, content: String((ctx.body as { content?: unknown }).content) };
      annotations.set(a.id, a);
      return created(a);
    },
  },
  { method: "GET", url: ITEM, scope: "annotation:read", parent: "project", handle: (ctx) => ok(one(ctx.params.id)) },
  {
    method: "DELETE",
    url: ITEM,
    scope: "annotation:write",
    parent: "project",
    handle: (ctx) => {
      annotations.delete(one(ctx.params.id).id);
      return noContent;
    },
  },
];
`;

/** The client's module: the wire schema and the three operations. */
const CLIENT = `import { z } from "zod";
import { type ClientContext, call, type ProjectParams } from "./common";
import { path } from "./transport";

/** An annotation. */
export const AnnotationSchema = z.looseObject({ id: z.number().int(), content: z.string().nullish() });

/** Operations on annotations: \`/api/projects/:project_id/annotations/\` (POST) and \`:id/\` (GET, DELETE). */
export function annotations(ctx: ClientContext) {
  const list = (p: ProjectParams) => path\`/api/projects/\${ctx.project(p)}/annotations/\`;
  return {
    create: (p: ProjectParams & { content: string }) =>
      call(ctx, { method: "POST", path: list(p), body: { content: p.content }, signal: p.signal }, AnnotationSchema),
    retrieve: (p: ProjectParams & { id: number }) =>
      call(ctx, { method: "GET", path: \`\${list(p)}\${p.id}/\`, signal: p.signal }, AnnotationSchema),
    remove: (p: ProjectParams & { id: number }) =>
      call(ctx, { method: "DELETE", path: \`\${list(p)}\${p.id}/\`, signal: p.signal }, z.unknown()),
  };
}
`;

/**
 * The card: inputs and outputs (each property documented), the facts every other part derives from, and the
 * operations. An existing annotation named by \`annotationId\` is adopted (the preview says so), and an adopted one
 * is kept on destroy.
 */
const CARD = `import { z } from "zod";
import { known } from "../framework/adoption";
import { resource } from "../framework/card";
import { ref, res } from "../framework/examples";
import { ProjectIdInput, resolveProjectId } from "../framework/inputs";

/** Inputs of an Annotation. */
export const AnnotationInputsSchema = z.strictObject({
  /** The annotation's text. */
  content: z.string().min(1),
  /** An existing annotation's id: the create adopts it instead of adding one. */
  annotationId: z.int().optional(),
  /** Project id; default: the provider's \`posthog:projectId\`, else the key's current project. */
  projectId: ProjectIdInput.optional(),
});

/** Outputs of an Annotation. */
export const AnnotationOutputsSchema = z.object({
  /** The annotation's text. */
  content: z.string(),
  /** The annotation's id. */
  annotationId: z.int(),
  /** The project of the annotation: its id, a string of digits. */
  projectId: z.string(),
});

type Outs = z.infer<typeof AnnotationOutputsSchema> & { adopted?: boolean } & Record<string, unknown>;

const outputs = (a: { id: number; content?: string | null | undefined }, projectId: string, adopted?: boolean): Outs => ({
  content: a.content ?? "",
  annotationId: a.id,
  projectId,
  ...(adopted ? { adopted } : {}),
});

/** The Annotation resource: its card and its operations. */
export const annotation = resource<typeof AnnotationInputsSchema, Outs, "Annotation", typeof AnnotationOutputsSchema>({
  name: "Annotation",
  summary: "A note on a project's graphs (type \`pulumi-nodejs:dynamic/posthog:Annotation\`).",
  description: "Annotation: a note on a project's graphs.\\nAPI: \`/api/projects/:project_id/annotations/\`.",
  examples: {
    typescript: ['import * as posthog from "pulumi-posthog";', "", 'new posthog.Annotation("launch", { content: "Launch" });'],
    program: {
      statements: [res("Annotation", "launch", { content: "Launch" })],
      outputs: { annotationId: ref("launch", "annotationId") },
    },
  },
  resolvedInputs: ["projectId", "annotationId"],
  outputs: AnnotationOutputsSchema,
  secretOutputs: [],
  exclusiveInputs: [],
  importId: {
    form: "<projectId>/<annotationId>",
    pattern: /^(\\d+)\\/(\\d+)$/,
    parse: (m) => ({ id: m[2] ?? "", props: { projectId: m[1] } }),
    object: (m) => \`Annotation \${m[2]} of project \${m[1]}\`,
  },
  adoption: {
    async probe(api, inputs) {
      if (!known(inputs.annotationId)) return undefined;
      const a = await api.annotations.retrieve({ id: Number(inputs.annotationId) });
      return { kind: "annotation", id: String(a.id), name: a.content ?? "", by: "annotationId" };
    },
  },
  records: { adopted: true },
  inputs: AnnotationInputsSchema,
  async create(api, want) {
    const projectId = await resolveProjectId(api, want.projectId);
    if (want.annotationId !== undefined) {
      const a = await api.annotations.retrieve({ projectId, id: want.annotationId });
      return { id: String(a.id), outs: outputs(a, projectId, true) };
    }
    const a = await api.annotations.create({ projectId, content: want.content });
    return { id: String(a.id), outs: outputs(a, projectId) };
  },
  async read(api, id, props) {
    const projectId = props.projectId ?? (await resolveProjectId(api));
    return outputs(await api.annotations.retrieve({ projectId, id: Number(id) }), projectId, props.adopted);
  },
  async delete(api, id, props) {
    if (props.adopted === true) return; // found before Pulumi: left as found
    await api.annotations.remove({ projectId: props.projectId, id: Number(id) });
  },
});
`;

/** The files a new resource adds. */
export const HAND_FILES: readonly HandFile[] = [
  { path: "emulator/api/annotations.ts", text: ROUTE },
  { path: "provider/client/annotations.ts", text: CLIENT },
  { path: "provider/resources/annotation.ts", text: CARD },
];

/** The lines a new resource adds to existing files: the route's operations, the client's module, the list's card. */
export const HAND_EDITS: readonly HandEdit[] = [
  {
    path: "emulator/api/index.ts",
    after: 'import type { Operation } from "../runtime";\n',
    insert: 'import { annotationOperations } from "./annotations";\n',
  },
  {
    path: "emulator/api/index.ts",
    after: "...dashboardOperations",
    insert: ", ...annotationOperations",
  },
  {
    path: "provider/client/index.ts",
    after: "on a Node.js too old for undici\n",
    insert: 'import { annotations } from "./annotations";\n',
  },
  {
    path: "provider/client/index.ts",
    after: "export interface PostHogClient {\n",
    insert: "  readonly annotations: ReturnType<typeof annotations>;\n",
  },
  {
    path: "provider/client/index.ts",
    after: "    settings,\n",
    insert: "    annotations: annotations(ctx),\n",
  },
  {
    path: "provider/resources/index.ts",
    after: "*/\n",
    insert: 'import { annotation } from "./annotation";\n',
  },
  { path: "provider/resources/index.ts", after: "export const RESOURCES = [\n", insert: "  annotation,\n" },
];
