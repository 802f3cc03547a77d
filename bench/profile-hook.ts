/**
 * Loaded with `node --require` (through NODE_OPTIONS) into the processes a profiled run starts: in the program
 * (`@pulumi/pulumi/cmd/run`) and the dynamic-provider host it starts the V8 CPU profiler through `node:inspector`,
 * and writes `<PROF_DIR>/<program|host>-<pid>.cpuprofile` when the process exits or is stopped with SIGTERM/SIGINT
 * (the Pulumi CLI stops the provider host with SIGINT to its process group, then SIGKILL after a cooldown, where
 * `--cpu-prof` would write nothing). Other processes are
 * left alone. Not part of the published package.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const dir = process.env.PROF_DIR;
const role = process.argv.some((a) => a.includes("dynamic-provider"))
  ? "host"
  : process.argv.some((a) => a.includes("cmd/run"))
    ? "program"
    : undefined;

if (dir && role) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 500 });
  session.post("Profiler.start");
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    // In-process sessions answer synchronously: the profile is written before the process goes.
    session.post("Profiler.stop", (err, result) => {
      if (!err) writeFileSync(`${dir}/${role}-${process.pid}.cpuprofile`, JSON.stringify(result.profile));
    });
  };
  process.on("exit", write);
  for (const signal of ["SIGTERM", "SIGINT"] as const)
    process.on(signal, () => {
      write();
      process.exit(0);
    });
}
