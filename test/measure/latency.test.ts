/**
 * The latency bench's floor (bench/latency.ts, `npm run bench -- --only latency` runs it at 300 resources): the
 * longest chain of dependent requests derived from a program's dependency graph and the requests per operation.
 */
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { chainOf, type GraphNode, generatedSizes, REQUESTS } from "../../bench/latency";

const node = (urn: string, kind: string, dependencies: string[] = []): GraphNode => ({
  urn,
  kind,
  dependencies,
});
// a Member and a (restricted) Dashboard, a collaborator on it for that member, and an unrelated Invite
const graph = [
  node("m", "Member"),
  node("d", "Dashboard"),
  node("c", "DashboardCollaborator", ["m", "d"]),
  node("i", "Invite"),
];

describe("chainOf", () => {
  it("up: the access check, then the heaviest path through the dependencies", () => {
    // access 1 + restricted dashboard (POST, its restriction level in the body, then the PATCH of its declared name)
    // 2 + collaborator (POST on a dashboard of the run) 1; the invite: a list read and a POST
    expect(chainOf(graph, "ours", "up", 0)).toEqual({ chain: 4, modelledRequests: 1 + 1 + 2 + 1 + 2 });
    // naive: member (list, PATCH) 2 + collaborator 1, no access check
    expect(chainOf(graph, "naive", "up", 0)).toEqual({ chain: 3, modelledRequests: 2 + 1 + 1 + 1 });
  });

  it("up: invites created together share bulk requests of up to 20, one per batch of the engine's workers", () => {
    const invites = Array.from({ length: 40 }, (_, i) => node(`i${i}`, "Invite"));
    const batches = Math.ceil(40 / Math.min(20, 4 * availableParallelism()));
    // each batch: one list read (no pending invite of the addresses), then one bulk request
    expect(chainOf(invites, "ours", "up", 0)).toEqual({ chain: 3, modelledRequests: 1 + 2 * batches });
    expect(chainOf(invites, "naive", "up", 0)).toEqual({ chain: 1, modelledRequests: 40 });
  });

  it("destroy: dependents first, through the reversed graph", () => {
    // access 1 + collaborator DELETE 1 + dashboard PATCH 1 (the member's delete sends nothing)
    expect(chainOf(graph, "ours", "destroy", 0)).toEqual({ chain: 3, modelledRequests: 1 + 0 + 1 + 1 + 1 });
  });

  it("refresh: every read at once, so the heaviest single read, then the program's data-source reads", () => {
    expect(chainOf(graph, "ours", "previewRefresh", 0)).toEqual({ chain: 2, modelledRequests: 5 });
    expect(chainOf(graph, "ours", "previewRefresh", 1)).toEqual({ chain: 3, modelledRequests: 6 });
  });

  it("counts a data-source read before a BatchExportPause on up", () => {
    const withPause = [...graph, node("p", "BatchExportPause")];
    expect(chainOf(withPause, "ours", "up", 1).chain).toBe(1 + 1 + 2); // the pause (read, GET + pause) outweighs
    expect(chainOf([node("p", "BatchExportPause")], "ours", "up", 1).chain).toBe(1 + 1 + 2);
  });

  it("knows every kind it is given, and says which it does not", () => {
    expect(Object.keys(REQUESTS.naive).sort()).toEqual(
      ["Dashboard", "DashboardCollaborator", "Invite", "Member"].sort(),
    );
    expect(() => chainOf([node("x", "Project")], "naive", "up", 0)).toThrow("no request count for Project");
  });

  it("sizes the generated program: a fifth each of members, invites, collaborators; dashboards the rest", () => {
    expect(generatedSizes(300)).toEqual({
      projects: 3,
      members: 60,
      invites: 60,
      collaborators: 60,
      dashboards: 120,
    });
  });
});
