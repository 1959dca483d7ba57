// The control plane's own Prometheus registry (served at GET /metrics on its listener): long-poll waiters,
// request latency by route template, dataplanes by state, and process metrics under meshext_control_plane_.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { ALL_TYPES, DATAPLANE_TYPE, GLOBAL_TYPES } from "../kuma-rest/resources.js";
import { collectProcessMetrics } from "../process-metrics.js";
import type { DataplaneRegistry, DataplaneState } from "./dataplanes.js";
import type { DecisionSamples } from "./decision-samples.js";
import type { ResourceStore } from "./store.js";
import { type ChangeNotifier, isLongPoll } from "./watch.js";
import type { PolicySetIndex } from "./policy-sets.js";

export const CONTROL_PLANE_METRIC_PREFIX = "meshext_control_plane_";

/** The route label of a held list request (`If-None-Match` + `?wait=`): its wait is not latency, so it is kept apart. */
export const LONG_POLL_ROUTE = "long-poll";

const DATAPLANE_STATES: readonly DataplaneState[] = ["online", "draining", "offline"];

/** Local store reads take about a millisecond; the top buckets are for long-polls (held up to 60 s). */
const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface ControlPlaneMetrics {
  registry: Registry;
  /** Times one request; call the returned function with the status once the reply is written. */
  startRequest(method: string, url: URL, headers: Record<string, string | string[] | undefined>): (status: number) => void;
}

export function createControlPlaneMetrics(sources: { notifier: ChangeNotifier; store: ResourceStore; dataplanes: DataplaneRegistry; policySets?: PolicySetIndex; decisionSamples?: DecisionSamples }): ControlPlaneMetrics {
  const registry = new Registry();
  const kinds = [...ALL_TYPES, ...GLOBAL_TYPES].map((t) => t.kind);
  new Gauge({
    name: `${CONTROL_PLANE_METRIC_PREFIX}long_poll_waiters`,
    help: "List requests held right now waiting for their collection to change (If-None-Match + ?wait=), by resource kind.",
    labelNames: ["collection_kind"],
    registers: [registry],
    collect() {
      const held = sources.notifier.waitersByKind();
      for (const kind of kinds) this.set({ collection_kind: kind }, held.get(kind) ?? 0);
    },
  });
  let pageRendersSeen = 0;
  new Counter({
    name: `${CONTROL_PLANE_METRIC_PREFIX}list_page_renders_total`,
    help: "List pages serialised: once per (collection, version, filter, page), however many clients (long-poll waiters included) receive it.",
    registers: [registry],
    collect() {
      this.inc(sources.notifier.pageRenders - pageRendersSeen);
      pageRendersSeen = sources.notifier.pageRenders;
    },
  });
  new Gauge({
    name: `${CONTROL_PLANE_METRIC_PREFIX}policy_set_waiters`,
    help: "Per-dataplane policy-set requests held right now (If-None-Match + ?wait= on …/dataplanes/{name}/_policy-set).",
    registers: [registry],
    collect() {
      this.set(sources.notifier.waitersByKind().get("_policy-set") ?? 0);
    },
  });
  let setRendersSeen = 0;
  new Counter({
    name: `${CONTROL_PLANE_METRIC_PREFIX}policy_set_renders_total`,
    help: "Per-dataplane policy sets rendered (GET …/dataplanes/{name}/_policy-set): once per change that reaches the set, however many requests read it.",
    registers: [registry],
    collect() {
      const renders = sources.policySets?.renders ?? 0;
      this.inc(renders - setRendersSeen);
      setRendersSeen = renders;
    },
  });
  new Gauge({
    name: `${CONTROL_PLANE_METRIC_PREFIX}dataplanes`,
    help: "Registered Dataplanes by live state (online, draining, offline).",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      const counts = new Map<string, number>(DATAPLANE_STATES.map((s) => [s, 0]));
      for (const dp of sources.store.list(DATAPLANE_TYPE.kind)) {
        const state = (sources.dataplanes.view(dp).status as { state: DataplaneState }).state;
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  if (sources.decisionSamples) decisionSampleMetrics(registry, sources.decisionSamples);
  const latency = new Histogram({
    name: `${CONTROL_PLANE_METRIC_PREFIX}http_request_duration_seconds`,
    help: `Control-plane HTTP request time from arrival to reply, by method, route template and status; held long-polls have route="${LONG_POLL_ROUTE}".`,
    labelNames: ["method", "route", "status"],
    buckets: LATENCY_BUCKETS_S,
    registers: [registry],
  });
  collectProcessMetrics(registry, CONTROL_PLANE_METRIC_PREFIX);
  return {
    registry,
    startRequest(method, url, headers) {
      const route = isLongPoll(url, headers) ? LONG_POLL_ROUTE : routeTemplate(url.pathname);
      const end = latency.startTimer({ method, route });
      return (status) => end({ status: String(status) });
    },
  };
}

/** Records pushed by sidecars (--decision-log-push): taken, let go by reason, pushes by answer, and held now. */
function decisionSampleMetrics(registry: Registry, samples: DecisionSamples): void {
  const registers = [registry];
  let receivedSeen = 0;
  new Counter({
    name: `${CONTROL_PLANE_METRIC_PREFIX}decision_samples_received_total`,
    help: "Decision records accepted from sidecars (POST …/dataplanes/{name}/_decision-samples).",
    registers,
    collect() {
      this.inc(samples.received - receivedSeen);
      receivedSeen = samples.received;
    },
  });
  const droppedSeen = new Map<string, number>();
  new Counter({
    name: `${CONTROL_PLANE_METRIC_PREFIX}decision_samples_dropped_total`,
    help: "Decision records let go, by reason: ring_full (a dataplane's newest --decision-samples-per-dataplane are kept), memory_limit (--decision-samples-max-bytes), dataplane_removed, refused (in a push answered 400 or 413).",
    labelNames: ["reason"],
    registers,
    collect() {
      for (const [reason, n] of samples.dropped) {
        this.inc({ reason }, n - (droppedSeen.get(reason) ?? 0));
        droppedSeen.set(reason, n);
      }
    },
  });
  const pushesSeen = new Map<string, number>();
  new Counter({
    name: `${CONTROL_PLANE_METRIC_PREFIX}decision_sample_pushes_total`,
    help: "Decision-sample pushes by answer: accepted, malformed (400), too_large (413), unknown_dataplane (404).",
    labelNames: ["result"],
    registers,
    collect() {
      for (const [result, n] of samples.pushes) {
        this.inc({ result }, n - (pushesSeen.get(result) ?? 0));
        pushesSeen.set(result, n);
      }
    },
  });
  new Gauge({
    name: `${CONTROL_PLANE_METRIC_PREFIX}decision_samples`,
    help: "Decision records held right now, across all dataplanes (in memory).",
    registers,
    collect() {
      this.set(samples.records);
    },
  });
  new Gauge({
    name: `${CONTROL_PLANE_METRIC_PREFIX}decision_sample_bytes`,
    help: "Bytes of the decision records held right now (bounded by --decision-samples-max-bytes).",
    registers,
    collect() {
      this.set(samples.bytes);
    },
  });
}

const MESH_SUBRESOURCES = new Set(["_heartbeat", "_rules", "_policy-set", "_decision-samples"]);

/** The path as a bounded template (names and meshes replaced), "other" for anything outside the API's shapes. */
export function routeTemplate(pathname: string): string {
  const seg = pathname.replace(/\/+$/, "").split("/").filter(Boolean);
  if (seg.length === 0) return "/";
  if (seg.length === 1 && (seg[0] === "_resources" || seg[0] === "metrics" || seg[0] === "meshes")) return `/${seg[0]}`;
  if (seg[0] === "meshes") {
    if (seg.length === 2) return "/meshes/{mesh}";
    if (seg.length === 3) return "/meshes/{mesh}/{type}";
    if (seg.length === 4) return "/meshes/{mesh}/{type}/{name}";
    if (seg.length === 5 && MESH_SUBRESOURCES.has(seg[4]!)) return `/meshes/{mesh}/{type}/{name}/${seg[4]}`;
    if (seg.length === 6 && seg[4] === "_resources" && seg[5] === "dataplanes") return "/meshes/{mesh}/{type}/{name}/_resources/dataplanes";
    return "other";
  }
  if (seg.length === 1) return "/{type}";
  if (seg.length === 2) return "/{type}/{name}";
  return "other";
}
