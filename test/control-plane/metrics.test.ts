// GET /metrics of the real control plane: no token needed, long-poll waiters counted while held, request latency
// labelled by route template (never a raw path, long-polls apart), dataplanes by state, and promtool accepts it.
import test from "ava";
import { createControlPlaneMetrics, routeTemplate } from "../../extproc/control-plane/metrics.js";
import { DecisionSamples } from "../../extproc/control-plane/decision-samples.js";
import { promtoolCheckMetrics } from "../helpers/tools.js";
import { call, controlPlaneFor, dataplane, eventually, mtp } from "./helpers.js";

const scrape = async (url: string) => {
  const res = await fetch(`${url}/metrics`);
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
};

/** The value of one sample line (`name{labels} value`), undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test("metrics › /metrics needs no token, counts held long-polls by kind, and times requests by route template", async (t) => {
  // Given a control plane whose writes need a token, holding a policy and a dataplane
  const { cp } = await controlPlaneFor(t, { token: "s3cret" });
  const auth = { authorization: "Bearer s3cret" };
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/allow-all", mtp("allow-all"), auth)).status, 201);
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/web-1", dataplane("web-1"), auth)).status, 201);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/allow-all")).status, 200);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/no-such-policy")).status, 404);

  // When a client holds a long-poll on the policy list
  const first = await fetch(`${cp.url}/meshes/default/meshtrafficpermissions`);
  const held = fetch(`${cp.url}/meshes/default/meshtrafficpermissions?wait=10s`, { headers: { "if-none-match": first.headers.get("etag")! } });
  const waiter = 'meshext_control_plane_long_poll_waiters{collection_kind="MeshTrafficPermission"}';
  t.true(await eventually(async () => sample((await scrape(cp.url)).text, waiter) === 1), "the held request is counted");

  // Then /metrics answers without a token in Prometheus text, with the waiter, the other kinds at 0, and the dataplane
  const during = await scrape(cp.url);
  t.is(during.status, 200);
  t.regex(during.contentType, /text\/plain/);
  t.is(sample(during.text, 'meshext_control_plane_long_poll_waiters{collection_kind="Dataplane"}'), 0);
  t.is(sample(during.text, 'meshext_control_plane_dataplanes{state="online"}'), 1);
  t.is(sample(during.text, 'meshext_control_plane_dataplanes{state="offline"}'), 0);
  t.true(during.text.includes("\nmeshext_control_plane_process_cpu_seconds_total"), "process metrics carry the prefix");

  // And once a write wakes the long-poll, it is no longer counted
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/second", mtp("second"), auth)).status, 201);
  t.is((await held).status, 200);
  t.true(await eventually(async () => sample((await scrape(cp.url)).text, waiter) === 0), "the woken request is released");

  // And latency is labelled with templates, the long-poll apart, never a raw name
  const after = (await scrape(cp.url)).text;
  const count = (labels: string) => sample(after, `meshext_control_plane_http_request_duration_seconds_count{${labels}}`);
  t.is(count('method="PUT",route="/meshes/{mesh}/{type}/{name}",status="201"'), 3);
  t.is(count('method="GET",route="/meshes/{mesh}/{type}/{name}",status="200"'), 1);
  t.is(count('method="GET",route="/meshes/{mesh}/{type}/{name}",status="404"'), 1);
  t.is(count('method="GET",route="/meshes/{mesh}/{type}",status="200"'), 1);
  t.is(count('method="GET",route="long-poll",status="200"'), 1);
  t.true((count('method="GET",route="/metrics",status="200"') ?? 0) >= 1);
  t.false(/allow-all|no-such-policy|web-1/.test(after), "no resource name appears in a label");

  const lint = promtoolCheckMetrics(after);
  if (!lint) {
    t.log("promtool not installed (Debian package prometheus): skipped the promtool lint; run npm test as root to install it");
    return;
  }
  t.is(lint.status, 0, `promtool check metrics said:\n${lint.output}`);
});

test("metrics › /metrics refuses writes with 405", async (t) => {
  const { cp } = await controlPlaneFor(t, { token: "s3cret" });
  const res = await fetch(`${cp.url}/metrics`, { method: "POST", headers: { authorization: "Bearer s3cret" } });
  t.is(res.status, 405);
  t.is(res.headers.get("allow"), "GET");
});

test("metrics › routeTemplate keeps the label set bounded: names become placeholders, unknown shapes 'other'", (t) => {
  const cases: Record<string, string> = {
    "/": "/",
    "/_resources": "/_resources",
    "/metrics": "/metrics",
    "/meshes/": "/meshes",
    "/meshes/default": "/meshes/{mesh}",
    "/meshes/default/meshtrafficpermissions": "/meshes/{mesh}/{type}",
    "/meshes/prod/dataplanes/web-1": "/meshes/{mesh}/{type}/{name}",
    "/meshes/prod/dataplanes/web-1/_heartbeat": "/meshes/{mesh}/{type}/{name}/_heartbeat",
    "/meshes/prod/dataplanes/web-1/_rules": "/meshes/{mesh}/{type}/{name}/_rules",
    "/meshes/prod/meshtrafficpermissions/p/_resources/dataplanes": "/meshes/{mesh}/{type}/{name}/_resources/dataplanes",
    "/meshes/prod/dataplanes/web-1/anything": "other",
    "/containerpatches": "/{type}",
    "/containerpatches/cp-1": "/{type}/{name}",
    "/a/b/c": "other",
    "/meshes/prod/dataplanes/web-1/_policy-set": "/meshes/{mesh}/{type}/{name}/_policy-set",
    "/meshes/prod/dataplanes/web-1/_decision-samples": "/meshes/{mesh}/{type}/{name}/_decision-samples",
    "/meshes/prod/dataplanes/web-1/_heartbeat/": "/meshes/{mesh}/{type}/{name}/_heartbeat",
    "/meshes/prod/meshtrafficpermissions/p/_resources/other": "other",
    "/meshes/prod/meshtrafficpermissions/p/_other/dataplanes": "other",
    "/meshes/prod/meshtrafficpermissions/p/_resources/dataplanes/x": "other",
    "/meshes/prod/meshtrafficpermissions/p/_resources": "other",
    "/metrics/": "/metrics",
    "/_resources/": "/_resources",
    "/meshes//": "/meshes",
    "//": "/",
    "": "/",
    "/containerpatches/": "/{type}",
    "/metrics/x": "/{type}/{name}",
    "/_resources/x": "/{type}/{name}",
    "/zones/z/y": "other",
    "/meshes/prod/dataplanes/web-1/_rules/x": "other",
    "/meshes/prod/dataplanes/web-1/_heartbeat/x": "other",
  };
  for (const [path, template] of Object.entries(cases)) t.is(routeTemplate(path), template, path);
});

/** Stand-ins for the registry's sources: `waiters` by kind, `pageRenders` and `renders` settable, dataplanes in the given states. */
function sources(states: string[] = []) {
  const waiters = new Map<string, number>();
  const notifier = { pageRenders: 0, waitersByKind: () => waiters };
  const dps = states.map((state, i) => ({ name: `dp-${i}`, state }));
  const store = { list: (kind: string) => (kind === "Dataplane" ? dps : []) };
  const dataplanes = { view: (dp: { state: string }) => ({ status: { state: dp.state } }) };
  const policySets = { renders: 0 };
  return { waiters, notifier, store, dataplanes, policySets };
}
type Sources = Parameters<typeof createControlPlaneMetrics>[0];
const text = async (m: ReturnType<typeof createControlPlaneMetrics>) => m.registry.metrics();

test("metrics › given each series, then it has a HELP line that says what it counts", async (t) => {
  const s = sources();
  const m = createControlPlaneMetrics({ ...s, decisionSamples: new DecisionSamples({ perDataplane: 1, maxBytes: 1024 }) } as unknown as Sources);
  const out = await text(m);
  const help = (name: string) => new RegExp(`^# HELP meshext_control_plane_${name} \\S.{20,}$`, "m");
  for (const name of ["long_poll_waiters", "list_page_renders_total", "policy_set_waiters", "policy_set_renders_total", "dataplanes", "decision_samples_received_total",
    "decision_samples_dropped_total", "decision_sample_pushes_total", "decision_samples", "decision_sample_bytes", "http_request_duration_seconds"]) {
    t.regex(out, help(name), name);
  }
  t.regex(out, /^# HELP meshext_control_plane_dataplanes .*online, draining, offline/m);
  t.regex(out, /^# HELP meshext_control_plane_decision_samples_dropped_total .*ring_full.*memory_limit.*dataplane_removed.*refused/m);
  t.regex(out, /^# HELP meshext_control_plane_decision_sample_pushes_total .*accepted.*malformed.*too_large.*unknown_dataplane/m);
  t.regex(out, /^# HELP meshext_control_plane_http_request_duration_seconds .*route="long-poll"/m);
});

test("metrics › given waiters on some kinds and on policy sets, then every kind is listed (0 when none waits) and policy-set waiters apart", async (t) => {
  const s = sources();
  const m = createControlPlaneMetrics(s as unknown as Sources);
  s.waiters.set("MeshTrafficPermission", 2).set("_policy-set", 3);
  const out = await text(m);
  t.is(sample(out, 'meshext_control_plane_long_poll_waiters{collection_kind="MeshTrafficPermission"}'), 2);
  t.is(sample(out, 'meshext_control_plane_long_poll_waiters{collection_kind="Dataplane"}'), 0);
  t.is(sample(out, 'meshext_control_plane_long_poll_waiters{collection_kind="ContainerPatch"}'), 0, "global kinds too");
  t.is(sample(out, 'meshext_control_plane_long_poll_waiters{collection_kind="Mesh"}'), 0);
  t.is(sample(out, "meshext_control_plane_policy_set_waiters"), 3);
  s.waiters.clear();
  t.is(sample(await text(m), "meshext_control_plane_policy_set_waiters"), 0);
});

test("metrics › given render counts that grow, when scraped again and again, then the counters follow them and never count one render twice", async (t) => {
  const s = sources();
  const m = createControlPlaneMetrics(s as unknown as Sources);
  s.notifier.pageRenders = 3;
  s.policySets.renders = 2;
  t.is(sample(await text(m), "meshext_control_plane_list_page_renders_total"), 3);
  const again = await text(m);
  t.is(sample(again, "meshext_control_plane_list_page_renders_total"), 3);
  t.is(sample(again, "meshext_control_plane_policy_set_renders_total"), 2);
  s.notifier.pageRenders = 5;
  s.policySets.renders = 7;
  const later = await text(m);
  t.is(sample(later, "meshext_control_plane_list_page_renders_total"), 5);
  t.is(sample(later, "meshext_control_plane_policy_set_renders_total"), 7);
  const noSets = createControlPlaneMetrics({ ...s, policySets: undefined } as unknown as Sources);
  t.is(sample(await text(noSets), "meshext_control_plane_policy_set_renders_total"), 0);
});

test("metrics › given dataplanes in several states, then each state counts its own and a state with none shows 0", async (t) => {
  const m = createControlPlaneMetrics(sources(["online", "online", "offline", "online"]) as unknown as Sources);
  const out = await text(m);
  t.is(sample(out, 'meshext_control_plane_dataplanes{state="online"}'), 3);
  t.is(sample(out, 'meshext_control_plane_dataplanes{state="offline"}'), 1);
  t.is(sample(out, 'meshext_control_plane_dataplanes{state="draining"}'), 0);
});

test("metrics › given decision samples taken, dropped and refused, when scraped twice, then every reason and answer is listed and each counted once", async (t) => {
  const samples = new DecisionSamples({ perDataplane: 2, maxBytes: 1024 });
  const m = createControlPlaneMetrics({ ...sources(), decisionSamples: samples } as unknown as Sources);
  const zero = await text(m);
  for (const reason of ["ring_full", "memory_limit", "dataplane_removed", "refused"]) t.is(sample(zero, `meshext_control_plane_decision_samples_dropped_total{reason="${reason}"}`), 0, reason);
  for (const result of ["accepted", "malformed", "too_large", "unknown_dataplane"]) t.is(sample(zero, `meshext_control_plane_decision_sample_pushes_total{result="${result}"}`), 0, result);
  samples.add("default", "web-1", ["aaaa", "bb", "c"]);
  samples.refused("too_large", 5);
  samples.refused("malformed");
  for (const out of [await text(m), await text(m)]) {
    t.is(sample(out, "meshext_control_plane_decision_samples_received_total"), 3);
    t.is(sample(out, 'meshext_control_plane_decision_samples_dropped_total{reason="ring_full"}'), 1);
    t.is(sample(out, 'meshext_control_plane_decision_samples_dropped_total{reason="refused"}'), 5);
    t.is(sample(out, 'meshext_control_plane_decision_sample_pushes_total{result="accepted"}'), 1);
    t.is(sample(out, 'meshext_control_plane_decision_sample_pushes_total{result="too_large"}'), 1);
    t.is(sample(out, 'meshext_control_plane_decision_sample_pushes_total{result="malformed"}'), 1);
    t.is(sample(out, "meshext_control_plane_decision_samples"), 2);
    t.is(sample(out, "meshext_control_plane_decision_sample_bytes"), 3);
  }
  samples.add("default", "web-2", ["d"]);
  samples.remove("default", "web-1");
  const later = await text(m);
  t.is(sample(later, "meshext_control_plane_decision_samples_received_total"), 4);
  t.is(sample(later, 'meshext_control_plane_decision_samples_dropped_total{reason="dataplane_removed"}'), 2);
  t.is(sample(later, 'meshext_control_plane_decision_sample_pushes_total{result="accepted"}'), 2);
  t.is(sample(later, "meshext_control_plane_decision_samples"), 1);
  t.is(sample(later, "meshext_control_plane_decision_sample_bytes"), 1);
  t.false((await text(createControlPlaneMetrics(sources() as unknown as Sources))).includes("decision_sample"), "no decision-sample series without a sample store");
});

test("metrics › given a request timed, then it lands in the histogram under its method, template and status, in buckets from 1 ms to 60 s", async (t) => {
  const m = createControlPlaneMetrics(sources() as unknown as Sources);
  m.startRequest("GET", new URL("http://cp/meshes/default/dataplanes/web-1"), {})(404);
  m.startRequest("GET", new URL("http://cp/meshes/default/dataplanes?wait=5s"), { "if-none-match": '"v1"' })(304);
  m.startRequest("GET", new URL("http://cp/meshes/default/dataplanes?wait=5s"), {})(200);
  const out = await text(m);
  const series = 'meshext_control_plane_http_request_duration_seconds_count{method="GET",route=';
  t.is(sample(out, `${series}"/meshes/{mesh}/{type}/{name}",status="404"}`), 1);
  t.is(sample(out, `${series}"long-poll",status="304"}`), 1);
  t.is(sample(out, `${series}"/meshes/{mesh}/{type}",status="200"}`), 1);
  const bounds = [...out.matchAll(/^meshext_control_plane_http_request_duration_seconds_bucket\{le="([^"]+)",method="GET",route="long-poll"/gm)].map((x) => x[1]);
  t.deepEqual(bounds, ["0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "+Inf"]);
});

test("metrics › given no dataplanes, then every state is listed at 0 and no other state appears", async (t) => {
  // Given a registry over an empty store; when scraped
  const out = await text(createControlPlaneMetrics(sources() as unknown as Sources));
  // Then online, draining and offline each show 0, and they are the only states
  for (const state of ["online", "draining", "offline"]) t.is(sample(out, `meshext_control_plane_dataplanes{state="${state}"}`), 0, state);
  t.deepEqual(out.match(/^meshext_control_plane_dataplanes\{state="[^"]*"\}/gm)?.length, 3);
});
