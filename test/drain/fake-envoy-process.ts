// A stand-in for the Envoy binary in `meshext run` tests: prints JSON lines on start and on each
// signal; exits with --exit-code N on SIGTERM, or ignores SIGTERM with --ignore-sigterm.
const args = process.argv.slice(2);
const exitCode = Number(args[args.indexOf("--exit-code") + 1] ?? 0) || 0;
const ignoreSigterm = args.includes("--ignore-sigterm");

const say = (event: string) => process.stdout.write(JSON.stringify({ fakeEnvoy: event, pid: process.pid, atMs: Date.now() }) + "\n");

process.on("SIGTERM", () => {
  say("SIGTERM");
  if (!ignoreSigterm) process.exit(exitCode);
});
process.on("SIGINT", () => say("SIGINT"));
setInterval(() => {}, 60_000);
say("started");
