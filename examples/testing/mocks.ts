/**
 * Mocks for unit tests of a program using pulumi-posthog: `pulumi.runtime.setMocks` with a `newResource` that
 * answers as the provider would (ids, output-only values) and a `call` that answers the lookups
 * (`posthog:index:getMember` …) from the table you give. `runProgram` runs the program inside a stack, as
 * `pulumi up` does, and records each resource's `additionalSecretOutputs`: the mock monitor does not apply them
 * (the engine does), so `newResource` marks those outputs secret itself, and `pulumi.isSecret` answers in the
 * tests as it will in a deployment.
 */
import * as pulumi from "@pulumi/pulumi";

/** A resource the program registered: its type token, Pulumi name and the inputs it was given. */
export interface Registered {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}

/** Lookup answers by token (`posthog:index:getMember` …), from the lookup's arguments. */
export type LookupAnswers = Record<string, (inputs: Record<string, unknown>) => Record<string, unknown>>;

/** Output-only values the provider would return, by resource name (the last part of the type token). */
function providerOutputs(kind: string, inputs: Record<string, unknown>, id: string): Record<string, unknown> {
  switch (kind) {
    case "Project":
      return { projectId: id, apiToken: `phc_${id}`, liveEventsToken: `phe_${id}` };
    case "Dashboard":
      return { projectId: String(inputs.projectId ?? "1001"), deleted: false };
    case "DashboardSharing":
      return { accessToken: inputs.enabled === false ? null : `share_${String(inputs.dashboardId)}` };
    default:
      return {};
  }
}

/** Installs the mocks; returns what they saw and a runner for the program. */
export async function posthogMocks(answers: LookupAnswers) {
  const resources: Registered[] = [];
  const calls: pulumi.runtime.MockCallArgs[] = [];
  const secretOutputs = new Map<string, string[]>();
  let nextId = 1000;

  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const kind = args.type.split(":").pop() ?? args.type;
        resources.push({ type: args.type, name: args.name, inputs: args.inputs });
        const id = String(++nextId);
        const state: Record<string, unknown> = { ...args.inputs, ...providerOutputs(kind, args.inputs, id) };
        // What the engine does with additionalSecretOutputs.
        for (const key of secretOutputs.get(`${args.type}::${args.name}`) ?? []) {
          if (key in state) state[key] = pulumi.secret(state[key]);
        }
        return { id, state };
      },
      call(args) {
        calls.push(args);
        const answer = answers[args.token];
        if (!answer) throw new Error(`the test gives no answer for ${args.token}`);
        return answer(args.inputs);
      },
    },
    "analytics",
    "test",
  );

  /** Runs `program` inside a stack (as `pulumi up` does); returns what it returns. */
  async function runProgram<T>(program: () => T): Promise<T> {
    let result: T | undefined;
    await pulumi.runtime.runInPulumiStack(async () => {
      pulumi.runtime.registerStackTransformation((resource) => {
        const opts: pulumi.CustomResourceOptions = resource.opts;
        secretOutputs.set(`${resource.type}::${resource.name}`, opts.additionalSecretOutputs ?? []);
        return undefined;
      });
      result = program();
      return {};
    });
    return result as T;
  }

  /** The inputs a resource of type `Name` and Pulumi name `name` was registered with. */
  function inputsOf(kind: string, name: string): Record<string, unknown> {
    const found = resources.find(
      (r) => r.type === `pulumi-nodejs:dynamic/posthog:${kind}` && r.name === name,
    );
    if (!found) throw new Error(`no ${kind} named ${name} was registered`);
    return found.inputs;
  }

  return { resources, calls, secretOutputs, runProgram, inputsOf };
}

/** The value of an Output once known (a test awaits it). */
export function settled<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}
