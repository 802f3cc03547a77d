import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, invalid, notFound } from "./errors";
import {
  type Emulator,
  parseBody,
  type Result,
  type RouteDef,
  refuseReservedKeys,
  registerRoutes,
  render,
  sendRendered,
  transact,
} from "./runtime";
import {
  ControlApiKeySchema,
  ControlClockSchema,
  ControlDnsSchema,
  ControlFaultSchema,
  ControlHoldSchema,
  ControlInviteBudgetSchema,
  ControlRateLimitSchema,
  ControlReleaseSchema,
  ControlUserSchema,
} from "./schemas";
import {
  hashKey,
  isInviteExpired,
  memberJson,
  newApiKey,
  nowIso,
  nowMs,
  type UserRecord,
  userJson,
} from "./world";

/** A control-plane handler: the status and JSON body to answer (`undefined` body: empty). */
type Handler = (request: FastifyRequest) => Result;

const authorize = (emu: Emulator, request: FastifyRequest): void => {
  const match = /^Bearer\s+(\S.+)$/.exec(request.headers.authorization ?? "");
  if (!match?.[1] || hashKey(match[1].trim()) !== emu.controlKeyHash) {
    throw new ApiError(
      401,
      "authentication_error",
      "authentication_failed",
      "The control plane needs the emulator's seed key as Bearer token.",
    );
  }
};

/** Creates a user (and, with `level`, their membership). */
function addUser(
  emu: Emulator,
  fields: { email: string; first_name: string; last_name: string },
  level?: number,
): UserRecord {
  const world = emu.world;
  const now = nowIso(world);
  const id = world.nextIds.user++;
  const user: UserRecord = {
    id,
    uuid: randomUUID(),
    distinct_id: randomUUID(),
    first_name: fields.first_name,
    last_name: fields.last_name,
    email: fields.email,
    is_email_verified: true,
    mascot_config: {},
    role_at_organization: "other",
    current_team_id: level === undefined ? null : (world.projects[0]?.id ?? null),
    last_login: null,
  };
  world.users.push(user);
  if (level !== undefined) {
    world.memberships.push({ id: randomUUID(), user_id: id, level, joined_at: now, updated_at: now });
  }
  return user;
}

/**
 * A control-plane route at `/_emulator<url>`: authorized by the seed key, reserved keys refused, answering what
 * `handler` returns. With `changesWorld` (default) the handler may change the world: it then runs through
 * `transact` (all-or-nothing, as the API's writes) and the world is saved.
 */
function controlRoute(
  emu: Emulator,
  method: "GET" | "POST" | "DELETE",
  url: string,
  handler: Handler,
  changesWorld = true,
): RouteDef {
  return {
    method,
    url: `/_emulator${url}`,
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      authorize(emu, request);
      refuseReservedKeys(request.body);
      // Writes to the world are all-or-nothing, as the API's (see `transact`).
      const rendered = changesWorld ? transact(emu, () => handler(request)) : render(handler(request));
      return sendRendered(reply, rendered);
    },
  };
}

/** The hold named by the request's `:id`; throws the API's 404 when there is none. */
function holdOf(emu: Emulator, request: FastifyRequest): Emulator["holds"][number] {
  const { id } = request.params as { id: string };
  const hold = emu.holds.find((h) => h.id === id);
  if (!hold) throw notFound();
  return hold;
}

/**
 * `POST /_emulator/invites/:id/accept`: the invitee accepts (an existing user joins at the invite's level, or a new
 * user is made), and the invite goes. Answers 201 with the membership; 404 for no such invite, 400 when it has
 * expired or its address already belongs to the organization.
 */
function acceptInvite(emu: Emulator, request: FastifyRequest): Result {
  const world = emu.world;
  const { id } = request.params as { id: string };
  const invite = world.invites.find((i) => i.id === id);
  if (!invite) throw notFound();
  if (isInviteExpired(world, invite)) {
    throw invalid("This invite has expired. Please ask your admin for a new one.", null, "expired");
  }
  const email = invite.target_email.toLowerCase();
  let user = world.users.find((u) => u.email.toLowerCase() === email);
  if (user && world.memberships.some((m) => m.user_id === user?.id)) {
    throw invalid("A user with this email address already belongs to the organization.");
  }
  if (user) {
    const now = nowIso(world);
    world.memberships.push({
      id: randomUUID(),
      user_id: user.id,
      level: invite.level,
      joined_at: now,
      updated_at: now,
    });
    user.current_team_id ??= world.projects[0]?.id ?? null;
  } else {
    user = addUser(
      emu,
      { email: invite.target_email, first_name: invite.first_name, last_name: "" },
      invite.level,
    );
  }
  world.invites = world.invites.filter((i) => i !== invite);
  const membership = world.memberships.find((m) => m.user_id === user.id);
  return { status: 201, body: { member: membership ? memberJson(world, membership) : null } };
}

/** `POST /_emulator/clock`: advances the clock, freezes or thaws it; answers its time and whether it is frozen. */
function setClock(emu: Emulator, request: FastifyRequest): Result {
  const body = parseBody(ControlClockSchema, request.body);
  const w = emu.world;
  const advance = (body.advanceSeconds ?? 0) * 1000 + (body.advanceMs ?? 0);
  if (w.clockFrozenAt !== null) w.clockFrozenAt += advance;
  else w.clockOffsetMs += advance;
  if (body.frozen === true && w.clockFrozenAt === null) w.clockFrozenAt = nowMs(w);
  if (body.frozen === false && w.clockFrozenAt !== null) {
    w.clockOffsetMs = w.clockFrozenAt - Date.now();
    w.clockFrozenAt = null;
  }
  return { status: 200, body: { now: nowIso(w), frozen: w.clockFrozenAt !== null } };
}

/** The routes that change the world: API keys, DNS TXT records, the clock, users, invite acceptance; and insights as stored. */
function worldRoutes(emu: Emulator): RouteDef[] {
  const world = () => emu.world;
  return [
    controlRoute(emu, "POST", "/api-keys", (request) => {
      const body = parseBody(ControlApiKeySchema, request.body);
      const email = body.userEmail?.toLowerCase();
      const user = email ? world().users.find((u) => u.email.toLowerCase() === email) : world().users[0];
      if (!user) throw invalid("No user with this email.", "userEmail");
      const key = newApiKey();
      world().apiKeys.push({
        hash: hashKey(key),
        user_id: user.id,
        scopes: body.scopes ?? null,
        organizations: body.organizations ?? null,
        projects: body.projects ?? null,
      });
      return { status: 201, body: { key } };
    }),
    controlRoute(emu, "POST", "/dns", (request) => {
      const body = parseBody(ControlDnsSchema, request.body);
      if (body.txt === null) delete world().dns[body.name];
      else world().dns[body.name] = body.txt;
      return { status: 204 };
    }),
    controlRoute(emu, "POST", "/clock", (request) => setClock(emu, request)),
    controlRoute(
      emu,
      "GET",
      "/insights/:id",
      (request) => {
        const { id } = request.params as { id: string };
        const insight = world().insights.find((i) => String(i.id) === id);
        if (!insight) throw notFound();
        return { status: 200, body: insight };
      },
      false,
    ),
    controlRoute(emu, "POST", "/users", (request) => {
      const body = parseBody(ControlUserSchema, request.body);
      if (world().users.some((u) => u.email.toLowerCase() === body.email.toLowerCase())) {
        throw invalid("A user with this email already exists.", "email", "unique");
      }
      const user = addUser(emu, body, body.level);
      return { status: 201, body: { user: userJson(user) } };
    }),
    controlRoute(emu, "POST", "/invites/:id/accept", (request) => acceptInvite(emu, request)),
  ];
}

/** Fault injection: add a fault, remove all, remove one. */
function faultRoutes(emu: Emulator): RouteDef[] {
  return [
    controlRoute(
      emu,
      "POST",
      "/faults",
      (request) => {
        const body = parseBody(ControlFaultSchema, request.body);
        const id = randomUUID();
        emu.faults.push({ ...body, id, pattern: new RegExp(body.path), hits: 0 });
        return { status: 201, body: { id } };
      },
      false,
    ),
    controlRoute(
      emu,
      "DELETE",
      "/faults",
      () => {
        emu.faults = [];
        return { status: 204 };
      },
      false,
    ),
    controlRoute(
      emu,
      "DELETE",
      "/faults/:id",
      (request) => {
        const { id } = request.params as { id: string };
        if (!emu.faults.some((f) => f.id === id)) throw notFound();
        emu.faults = emu.faults.filter((f) => f.id !== id);
        return { status: 204 };
      },
      false,
    ),
  ];
}

/** Holds (requests that wait until released): add, view, release some, remove one (releasing), remove all. */
function holdRoutes(emu: Emulator): RouteDef[] {
  return [
    controlRoute(
      emu,
      "POST",
      "/holds",
      (request) => {
        const body = parseBody(ControlHoldSchema, request.body);
        const id = randomUUID();
        emu.holds.push({ ...body, id, pattern: new RegExp(body.path), hits: 0, held: [] });
        return { status: 201, body: { id } };
      },
      false,
    ),
    controlRoute(
      emu,
      "GET",
      "/holds/:id",
      (request) => {
        const hold = holdOf(emu, request);
        return {
          status: 200,
          body: {
            id: hold.id,
            method: hold.method ?? null,
            path: hold.path,
            times: hold.times ?? null,
            cutAfterMs: hold.cutAfterMs ?? null,
            hits: hold.hits,
            held: hold.held.map(({ method, path, body }) => ({ method, path, body: body ?? null })),
          },
        };
      },
      false,
    ),
    controlRoute(
      emu,
      "POST",
      "/holds/:id/release",
      (request) => {
        const hold = holdOf(emu, request);
        const body = parseBody(ControlReleaseSchema, request.body);
        const released = hold.held.splice(0, body.count ?? hold.held.length);
        for (const r of released) r.release();
        return { status: 200, body: { released: released.length } };
      },
      false,
    ),
    controlRoute(
      emu,
      "DELETE",
      "/holds/:id",
      (request) => {
        const hold = holdOf(emu, request);
        emu.holds = emu.holds.filter((h) => h !== hold);
        for (const r of hold.held.splice(0)) r.release();
        return { status: 204 };
      },
      false,
    ),
    controlRoute(
      emu,
      "DELETE",
      "/holds",
      () => {
        for (const hold of emu.holds.splice(0)) for (const r of hold.held.splice(0)) r.release();
        return { status: 204 };
      },
      false,
    ),
  ];
}

/** The request log (read, clear), the rate limits and the invite budget. */
function limitRoutes(emu: Emulator): RouteDef[] {
  return [
    controlRoute(emu, "GET", "/requests", () => ({ status: 200, body: emu.requestLog }), false),
    controlRoute(
      emu,
      "DELETE",
      "/requests",
      () => {
        emu.requestLog = [];
        return { status: 204 };
      },
      false,
    ),
    controlRoute(
      emu,
      "POST",
      "/rate-limit",
      (request) => {
        const body = parseBody(ControlRateLimitSchema, request.body);
        emu.rateLimit = "enabled" in body ? false : { perMinute: body.perMinute, perHour: body.perHour };
        emu.throttles.clear();
        return { status: 200, body: { rateLimit: emu.rateLimit } };
      },
      false,
    ),
    controlRoute(
      emu,
      "POST",
      "/invite-budget",
      (request) => {
        const body = parseBody(ControlInviteBudgetSchema, request.body);
        emu.inviteBudget = "enabled" in body ? false : { perHour: body.perHour, perDay: body.perDay };
        emu.inviteHistory = [];
        return { status: 200, body: { inviteBudget: emu.inviteBudget } };
      },
      false,
    ),
  ];
}

/**
 * The control plane under `/_emulator/` (authorized by the seed key): API keys, DNS TXT records, the
 * clock (advanced, frozen), users, invite acceptance, insights as stored, fault injection, holds (requests that
 * wait until released), the request log, rate limits and the invite budget.
 */
export function registerControlPlane(app: FastifyInstance, emu: Emulator): void {
  registerRoutes(
    app,
    [...worldRoutes(emu), ...faultRoutes(emu), ...holdRoutes(emu), ...limitRoutes(emu)],
    (request) => authorize(emu, request),
  );
}
