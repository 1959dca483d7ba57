// The injected init container's redirection: the rules it writes, and `meshext redirect` run as rendered
// inside a pod network namespace with real iptables: a peer's connection to the app port reaches Envoy's
// inbound listener; the probe port and loopback reach their own servers; a second run changes nothing.
import test from "ava";
import { execFileSync, spawnSync } from "node:child_process";
import { renderSidecar } from "../../extproc/inject/render.js";
import { inboundRules, INBOUND_CHAIN } from "../../extproc/redirect/rules.js";
import { createNetnsPair, netnsUnavailable } from "../helpers/netns.js";
import { which } from "../helpers/tools.js";
import { CLI_PATH } from "../drain/meshext-process.js";
import { settings } from "../inject/helpers.js";

test("redirect › the rules: one chain, only the app port, to the redirect port", (t) => {
  t.is(inboundRules({ appPort: 8080, redirectPort: 15006 }), `*nat\n:${INBOUND_CHAIN} - [0:0]\n-A ${INBOUND_CHAIN} -p tcp -m tcp --dport 8080 -j REDIRECT --to-ports 15006\nCOMMIT\n`);
});

test("redirect › bad flags exit 2; no app port installs nothing; --dry-run prints the rules", (t) => {
  const cli = (...args: string[]) => spawnSync(process.execPath, [CLI_PATH, "redirect", ...args], { encoding: "utf8" });
  t.is(cli("--app-port=15006").status, 2);
  t.is(cli("--app-port=x").status, 2);
  const none = cli();
  t.is(none.status, 0);
  t.regex(none.stdout, /nothing to redirect/);
  const dry = cli("--app-port=8080", "--dry-run");
  t.is(dry.status, 0);
  t.true(dry.stdout.startsWith(inboundRules({ appPort: 8080, redirectPort: 15006 })));
});

/** A server in the pod answering its own name. */
function nameServer(name: string): string {
  return `require("node:http").createServer((q, s) => s.end(${JSON.stringify(name)})).listen(Number(process.argv[1]), "0.0.0.0", () => console.log("up"))`;
}

test.serial("redirect › in a pod namespace, the init container as rendered sends a peer's traffic for the app port to Envoy's listener, and nothing else", async (t) => {
  const reason = netnsUnavailable() ?? (which("iptables-restore") ? undefined : "no iptables-restore (Debian package iptables)");
  if (reason) {
    t.log(`skipped: ${reason}`);
    t.pass();
    return;
  }
  const net = createNetnsPair();
  t.teardown(() => net.destroy());
  // given the init container meshext inject renders for an app on 8080 (its command, with this checkout's meshext)
  const init = renderSidecar(settings(), "native", { tags: [], inboundPorts: [8080], appPort: 8080, probes: [], virtualProbes: true }).init;
  const command = [...(init.command as string[]).slice(settings().sidecarExec.length), ...(init.args as string[])];
  t.deepEqual(command, ["redirect", "--app-port=8080", "--redirect-port=15006"]);
  const servers: ReturnType<typeof net.spawnInPod>[] = [];
  t.teardown(() => servers.forEach((s) => s.kill("SIGKILL")));
  for (const [name, port] of [["app", 8080], ["envoy-inbound", 15006], ["probes", 9000]] as const) {
    const child = net.spawnInPod([process.execPath, "-e", nameServer(name), String(port)]);
    servers.push(child);
    await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  }
  // when it runs in the pod (twice: init containers run again when the pod restarts)
  for (let i = 0; i < 2; i++) {
    const r = spawnSync("ip", ["netns", "exec", net.podNs, process.execPath, CLI_PATH, ...command], { encoding: "utf8" });
    t.is(r.status, 0, r.stderr);
  }
  // then the peer's connection to the app port reaches Envoy's listener; the probe port and loopback are untouched
  const body = async (ns: "pod" | "peer", url: string) => {
    const r = await net.fetchFrom(ns, url);
    return "body" in r ? r.body : r.error;
  };
  t.is(await body("peer", `http://${net.podIp}:8080/`), "envoy-inbound");
  t.is(await body("peer", `http://${net.podIp}:9000/`), "probes", "kubelet reaches the probe port directly");
  t.is(await body("pod", "http://127.0.0.1:8080/"), "app", "Envoy reaches the app on loopback, not redirected");
  const prerouting = execFileSync("ip", ["netns", "exec", net.podNs, "iptables", "-t", "nat", "-S", "PREROUTING"], { encoding: "utf8" });
  t.is(prerouting.split("\n").filter((l) => l.includes(INBOUND_CHAIN)).length, 1, "the jump is installed once");
});
