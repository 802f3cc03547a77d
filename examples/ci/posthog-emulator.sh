#!/usr/bin/env bash
# Starts and stops the PostHog API emulator in CI, reliably (no emulator is left running).
#
#   posthog-emulator.sh run -- <command> [args...]   start it, run the command with POSTHOG_* set, stop it
#                                                    (also on failure or Ctrl-C); exits with the command's status
#   posthog-emulator.sh start [emulator flags...]    start it, print POSTHOG_HOST, POSTHOG_API_KEY,
#                                                    POSTHOG_ORGANIZATION_ID, POSTHOG_PROJECT_ID and
#                                                    POSTHOG_EMULATOR_PID as NAME=value lines
#                                                    (append them to "$GITHUB_ENV" in GitHub Actions)
#   posthog-emulator.sh stop [pid]                   stop it (default: $POSTHOG_EMULATOR_PID) and wait until
#                                                    it is gone
#
# It runs the installed bin (node_modules/.bin/posthog-emulator; needs `npm install --save-dev pulumi-posthog
# fastify@5`), never `npx posthog-emulator &`: `$!` would then be npx's process, and `kill $!` stops npx and
# leaves the emulator (its grandchild) running. The emulator's ready line carries its own pid, which is what
# `stop` signals. Flags after `start` (or in POSTHOG_EMULATOR_FLAGS for `run`) go to the emulator; the default
# is `--port 0 --rate-limit off`.
set -euo pipefail

bin="${POSTHOG_EMULATOR_BIN:-node_modules/.bin/posthog-emulator}"
ready_timeout="${POSTHOG_EMULATOR_READY_TIMEOUT:-30}" # seconds
stop_timeout="${POSTHOG_EMULATOR_STOP_TIMEOUT:-10}"   # seconds before SIGKILL

die() {
  echo "posthog-emulator.sh: $*" >&2
  exit 1
}

start() {
  [ -x "$bin" ] || die "$bin not found: run \`npm install --save-dev pulumi-posthog fastify@5\` (or set POSTHOG_EMULATOR_BIN)"
  local dir
  dir="$(mktemp -d)"
  local flags=("$@")
  [ ${#flags[@]} -gt 0 ] || flags=(--port 0 --rate-limit off)
  # stdout/stderr to files, not a pipe: nothing blocks on a full pipe, and the step's output can close.
  "$bin" "${flags[@]}" >"$dir/ready" 2>"$dir/stderr" </dev/null &
  local launched=$!
  local waited=0
  # The ready line is complete once it ends with a newline.
  until [ -s "$dir/ready" ] && [ "$(tail -c 1 "$dir/ready" | od -An -c | tr -d ' ')" = '\n' ]; do
    if ! kill -0 "$launched" 2>/dev/null; then
      cat "$dir/stderr" >&2
      rm -rf "$dir"
      die "the emulator exited before it was ready"
    fi
    if [ "$waited" -ge $((ready_timeout * 10)) ]; then
      kill -KILL "$launched" 2>/dev/null || true
      cat "$dir/stderr" >&2
      rm -rf "$dir"
      die "the emulator printed no ready line within ${ready_timeout}s"
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  # {"url","apiKey","organizationId","projectId","pid"} → NAME=value lines (node is there: the emulator needs it).
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]);
    for (const [name, value] of [["POSTHOG_HOST", r.url], ["POSTHOG_API_KEY", r.apiKey],
      ["POSTHOG_ORGANIZATION_ID", r.organizationId], ["POSTHOG_PROJECT_ID", r.projectId],
      ["POSTHOG_EMULATOR_PID", r.pid]]) console.log(`${name}=${value}`);
  ' "$dir/ready"
  rm -rf "$dir"
}

# Whether process $1 runs (a zombie, exited but not yet reaped by its parent, does not).
running() {
  local state
  state="$(ps -p "$1" -o stat= 2>/dev/null || true)"
  [ -n "$state" ] && [ "${state#Z}" = "$state" ]
}

stop() {
  local pid="${1:-${POSTHOG_EMULATOR_PID:-}}"
  [ -n "$pid" ] || die "stop: no pid (pass it, or set POSTHOG_EMULATOR_PID from the output of start)"
  running "$pid" || return 0 # already gone
  # Never signal a reused pid: only a process running the emulator.
  local command_line
  command_line="$(ps -p "$pid" -o command= 2>/dev/null || true)"
  case "$command_line" in
    *posthog-emulator* | *emulator/cli.js*) ;;
    "" | "["*"]")
      # No command line: the process is exiting. Linux frees its memory (and with it the command line, which ps
      # then shows as "[node]") before it becomes a zombie; an emulator that got the same Ctrl-C as this script
      # is there at this moment. It needs no signal: wait until it is gone.
      gone_within "$stop_timeout" "$pid" || die "stop: process $pid showed no command line and did not exit within ${stop_timeout}s"
      return 0
      ;;
    *)
      running "$pid" || return 0 # exited meanwhile
      die "stop: process $pid is not the emulator ($command_line)"
      ;;
  esac
  kill -TERM "$pid" 2>/dev/null || return 0 # SIGTERM: the emulator closes its server and exits 0
  gone_within "$stop_timeout" "$pid" || kill -KILL "$pid" 2>/dev/null || true
}

# Whether process $2 is gone within $1 seconds (polled every 0.1 s).
gone_within() {
  local waited=0
  while running "$2"; do
    [ "$waited" -lt $(($1 * 10)) ] || return 1
    sleep 0.1
    waited=$((waited + 1))
  done
}

command="${1:-}"
[ $# -gt 0 ] && shift
case "$command" in
  start) start "$@" ;;
  stop) stop "$@" ;;
  run)
    [ "${1:-}" = "--" ] && shift
    [ $# -gt 0 ] || die "run: give the command to run after --"
    # shellcheck disable=SC2086 # POSTHOG_EMULATOR_FLAGS is a list of flags
    env_lines="$(start ${POSTHOG_EMULATOR_FLAGS:-})"
    while IFS='=' read -r name value; do export "$name=$value"; done <<<"$env_lines"
    trap 'stop "$POSTHOG_EMULATOR_PID"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    status=0
    "$@" || status=$?
    exit "$status"
    ;;
  *) die "usage: posthog-emulator.sh run -- <command...> | start [flags...] | stop [pid]" ;;
esac
