import type { z } from "zod";

/**
 * An API error rendered the way the real service renders it (drf-exceptions-hog):
 * `{"type", "code", "detail", "attr"}` with the HTTP status. `headers` are extra response headers.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  /** The wire body `{type, code, detail, attr}`. */
  body(): { type: string; code: string; detail: string; attr: string | null } {
    return { type: this.type, code: this.code, detail: this.detail, attr: this.attr };
  }
}

/** 404 `not_found` (detail defaults to the framework's "Not found."). */
export const notFound = (detail = "Not found."): ApiError =>
  new ApiError(404, "invalid_request", "not_found", detail);

/** 403 `permission_denied`; the real service types every 403 as `authentication_error`. */
export const forbidden = (detail = "You do not have permission to perform this action."): ApiError =>
  new ApiError(403, "authentication_error", "permission_denied", detail);

/** 400 `validation_error` with the given code (default `invalid_input`) and attribute. */
export const invalid = (detail: string, attr: string | null = null, code = "invalid_input"): ApiError =>
  new ApiError(400, "validation_error", code, detail, attr);

/** 405 `method_not_allowed` for a route that exists with other methods. */
export const methodNotAllowed = (method: string): ApiError =>
  new ApiError(405, "invalid_request", "method_not_allowed", `Method "${method}" not allowed.`);

/** 429 `throttled` with the real detail text ("Expected available in N seconds."). */
export function throttled(waitSeconds: number, headers: Record<string, string> = {}): ApiError {
  const wait = Math.max(0, Math.ceil(waitSeconds));
  const unit = wait === 1 ? "second" : "seconds";
  return new ApiError(
    429,
    "throttled_error",
    "throttled",
    `Request was throttled. Expected available in ${wait} ${unit}.`,
    null,
    headers,
  );
}

/** 5xx `server_error` as the real handler renders unexpected failures. */
export const serverError = (status = 500, headers: Record<string, string> = {}): ApiError =>
  new ApiError(status, "server_error", "error", "A server error occurred.", null, headers);

const pythonType = (value: unknown): string => {
  if (value === null) return "NoneType";
  if (Array.isArray(value)) return "list";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  return "dict";
};

type Issue = z.core.$ZodRawIssue;

/**
 * Per-parse zod error map producing Django REST framework's messages. Messages set on a schema
 * (`{ error: "..." }`) take precedence over this map.
 */
export function drfMessage(issue: Issue): string {
  const input = issue.input;
  switch (issue.code) {
    case "invalid_type": {
      if (input === undefined) return "This field is required.";
      if (input === null) return "This field may not be null.";
      switch (issue.expected) {
        case "boolean":
          return "Must be a valid boolean.";
        case "number":
        case "int":
          return "A valid integer is required.";
        case "string":
          return "Not a valid string.";
        case "array":
          return `Expected a list of items but got type "${pythonType(input)}".`;
        case "object":
        case "record":
          return `Expected a dictionary of items but got type "${pythonType(input)}".`;
        default:
          return "Invalid value.";
      }
    }
    case "invalid_value":
      if (input === undefined) return "This field is required.";
      if (input === null) return "This field may not be null.";
      return `"${String(input)}" is not a valid choice.`;
    case "too_big":
      if (issue.origin === "string") return `Ensure this field has no more than ${issue.maximum} characters.`;
      if (issue.origin === "array") return `Ensure this field has no more than ${issue.maximum} elements.`;
      return `Ensure this value is less than or equal to ${issue.maximum}.`;
    case "too_small":
      if (issue.origin === "string" && issue.minimum === 1) return "This field may not be blank.";
      if (issue.origin === "string") return `Ensure this field has at least ${issue.minimum} characters.`;
      if (issue.origin === "array") return `Ensure this field has at least ${issue.minimum} elements.`;
      return `Ensure this value is greater than or equal to ${issue.minimum}.`;
    case "invalid_format":
      if (issue.format === "email") return "Enter a valid email address.";
      if (issue.format === "uuid") return "Must be a valid UUID.";
      return "Enter a valid value.";
    default:
      return "Invalid value.";
  }
}

const drfCode = (issue: z.core.$ZodIssue): string => {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "required";
      if (issue.input === null) return "null";
      return "invalid_input";
    case "invalid_value":
      if (issue.input === undefined) return "required";
      if (issue.input === null) return "null";
      return "invalid_choice";
    case "too_big":
      return issue.origin === "string" || issue.origin === "array" ? "max_length" : "max_value";
    case "too_small":
      if (issue.origin === "string" && issue.minimum === 1) return "blank";
      return issue.origin === "string" || issue.origin === "array" ? "min_length" : "min_value";
    case "custom": {
      const code = (issue.params as { code?: unknown } | undefined)?.code;
      return typeof code === "string" ? code : "invalid_input";
    }
    default:
      return "invalid_input";
  }
};

/** The first zod issue as a 400 `validation_error`; `attr` joins the path with `__` (null at the top). */
export function fromZodError(error: z.ZodError, attrPrefix = ""): ApiError {
  const issue = error.issues[0];
  if (!issue) return invalid("Invalid input.");
  const path = [attrPrefix, ...issue.path.map(String)].filter((p) => p !== "").join("__");
  return invalid(issue.message, path === "" ? null : path, drfCode(issue));
}
