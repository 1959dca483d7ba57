// What every route of the REST API takes and gives: the request as the server read it, the reply it writes,
// and the store, registries and settings a route works on. routes.ts composes the routes; none imports it.
import type { KumaVersion } from "../kuma-rest/kuma-version.js";
import type { DataplaneRegistry } from "./dataplanes.js";
import type { DecisionSamples } from "./decision-samples.js";
import type { PolicySetIndex } from "./policy-sets.js";
import type { BodyLimits } from "./safety.js";
import type { ResourceStore } from "./store.js";
import type { ChangeNotifier } from "./watch.js";

export interface ApiRequest {
  method: string;
  url: URL;
  headers: Record<string, string | string[] | undefined>;
  /** Reads the (size-limited) body; only called for writes. */
  body(): Promise<Buffer>;
  /** Resolves when the client goes away (ends long-polls early). */
  abandoned: Promise<void>;
}

export interface ApiReply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** The body already serialised as JSON (shared list pages); written as is instead of `body`. */
  bytes?: Buffer;
}

export interface RouteContext {
  store: ResourceStore;
  dataplanes: DataplaneRegistry;
  notifier: ChangeNotifier;
  /** Each Dataplane's own policy set (GET …/dataplanes/{name}/_policy-set). */
  policySets: PolicySetIndex;
  /** Decision records pushed by sidecars (--decision-log-push), for dry runs. */
  decisionSamples: DecisionSamples;
  token: string;
  limits: BodyLimits;
  /** meshext's own version (`version` in `GET /`). */
  version: string;
  /** The Kuma release whose semantics this control plane follows (`basedOnKuma` in `GET /`). */
  kumaVersion: KumaVersion;
}
