// GET /metrics of the real control plane: no token needed, long-poll waiters counted while held, request latency
// labelled by route template (never a raw path, long-polls apart), dataplanes by state, and promtool accepts it.
import test from "ava";
import { routeTemplate } from "../../extproc/control-plane/metrics.js";
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
  };
  for (const [path, template] of Object.entries(cases)) t.is(routeTemplate(path), template, path);
});
