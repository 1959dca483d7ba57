// The listed mutations `npm run mutation` applies to the compiled pure core, one at a time: each names a
// plausible bug, the source file it lives in, the compiled text to find and its replacement, and the
// group of test files that should catch it.
//
// `find` is matched against dist/<file>.js (TypeScript output: no type annotations, `if (c) x;` may be split
// over two lines); every run of whitespace in `find` matches any run of whitespace, so formatting is not
// significant. A `find` that is missing (the code moved on) or found more than once is reported as
// "not applied", never guessed at.
//
// Left out on purpose (no test can tell them apart from the real code): dropping an fsync in
// atomic-file.ts (only a power loss shows it), and reversing matchFrom's sort of regions by positive-tag
// count (every region of one client picks one value per key, so all have the same size).

/** Test files per area; a mutation runs only its group's files. */
export const TEST_GROUPS = {
  policy: [
    "test/policy/conformance.test.ts",
    "test/policy/engine.test.ts",
    "test/policy/precedence-merge.test.ts",
    "test/policy/match.test.ts",
    "test/policy/identity.test.ts",
    "test/policy/explain.test.ts",
    "test/policy/rate-limit.test.ts",
    "test/policy/shadow-deny.test.ts",
    "test/config/security-defaults.test.ts",
  ],
  config: ["test/config/flags.test.ts", "test/config/security-defaults.test.ts"],
  processor: ["test/transport/processor.test.ts", "test/transport/protocol.test.ts", "test/transport/mutation-rules.test.ts", "test/transport/headers.test.ts"],
  source: ["test/policy/dir-source.test.ts"],
  transport: ["test/transport/grpc-wire.test.ts", "test/transport/grpc-server.test.ts", "test/transport/cancel.test.ts", "test/transport/cancel-races.test.ts", "test/properties/request-decoder.test.ts"],
  drain: ["test/drain/controller.test.ts"],
  atomic: ["test/control-plane/atomic-file.test.ts", "test/control-plane/kill9.test.ts", "test/control-plane/api.test.ts"],
  runtime: ["test/config/idle-trim.test.ts"],
  inject: ["test/inject/patch.test.ts", "test/inject/container-patch.test.ts", "test/inject/fail-closed.test.ts", "test/inject/idempotence.test.ts", "test/inject/workloads.test.ts"],
};

const m = (name, group, file, find, replace) => ({ name, group, file, find, replace });

export const MUTATIONS = [
  // policy engine: precedence and merge
  m("precedence: MeshSubset ranks above MeshService", "policy", "extproc/policy/model/kuma-version.ts", "const RANK_26 = { Mesh: 1, MeshSubset: 2, MeshGateway: 3, MeshService: 4,", "const RANK_26 = { Mesh: 1, MeshSubset: 5, MeshGateway: 3, MeshService: 4,"),
  m("precedence: targetRef kind ignored", "policy", "extproc/policy/selection/precedence.ts", "return (a, b) => rank(a) - rank(b) ||", "return (a, b) => 0 ||"),
  m("precedence: origin zone/global swapped", "policy", "extproc/policy/selection/precedence.ts", 'p.origin === "global" ? 0 : p.origin === "zone" ? 2 : 1', 'p.origin === "global" ? 2 : p.origin === "zone" ? 0 : 1'),
  m("precedence: name tie-break reversed", "policy", "extproc/policy/selection/precedence.ts", 'return traits.nameWins === "earlier" ? -earlierFirst : earlierFirst;', 'return traits.nameWins === "earlier" ? earlierFirst : -earlierFirst;'),
  m("merge: objects replaced instead of deep-merged", "policy", "extproc/policy/selection/merge.ts", "isObj(value) && isObj(prev) ? mergeInto(prev, value) : clone(value)", "clone(value)"),
  m("merge: null unsets a field", "policy", "extproc/policy/selection/merge.ts", "const clean = dropNulls(c);", "const clean = c;"),
  m("merge: first conf wins", "policy", "extproc/policy/selection/merge.ts", "for (const c of confs) {", "for (const c of [...confs].reverse()) {"),
  // policy engine: matching
  m("match: MeshSubset ignores its tags", "policy", "extproc/policy/selection/match.ts", "return proxyTypeMatches(ref, dp) && tagsContain(inbound.tags, ref.tags ?? {});", "return proxyTypeMatches(ref, dp);"),
  m("match: \"*\" is a literal value", "policy", "extproc/policy/selection/match.ts", '(v !== "*" && have !== v)', "(have !== v)"),
  m("match: negated tags ignored", "policy", "extproc/policy/selection/match.ts", "if (has === t.not) return false;", "if (!has && !t.not) return false;"),
  m("match: policies of another mesh select", "policy", "extproc/policy/selection/match.ts", "if (policy.mesh !== dp.mesh) return [];", ""),
  m("match: proxyTypes ignored", "policy", "extproc/policy/selection/match.ts", "return !ref.proxyTypes || ref.proxyTypes.length === 0 || ref.proxyTypes.includes(dp.proxyType);", "return true;"),
  m("from: deciding item is the first, not the last", "policy", "extproc/policy/plans/from-items.ts", "for (let i = match.items.length - 1; i >= 0; i--)", "for (let i = 0; i < match.items.length; i++)"),
  m("from: items not in policy order", "policy", "extproc/policy/plans/from-items.ts", "return items.sort((a, b) => a.order - b.order);", "return items;"),
  m("rules: least specific rule first", "policy", "extproc/policy/plans/rules.ts", "rules.sort((a, b) => positives(b) - positives(a));", "rules.sort((a, b) => positives(a) - positives(b));"),
  // policy engine: the inbound decision
  m("inbound: a delay hides a shadow deny", "policy", "extproc/policy/decide/kinds.ts", 'if (state.allow.action !== "shadow-deny") state.allow = fault.explain; else state.allow = { ...state.allow, reason: `${state.allow.reason}; ${fault.explain.reason}` };', "state.allow = fault.explain;"),
  m("inbound: AllowWithShadowDeny reported as allow", "policy", "extproc/policy/decide/mtp.ts", 'const shadow = matches.find((m) => m.conf.action === "AllowWithShadowDeny");', "const shadow = undefined;"),
  m("inbound: AllowWithShadowDeny denies", "policy", "extproc/policy/decide/mtp.ts", 'const ALLOWING = new Set(["Allow", "AllowWithShadowDeny"]);', 'const ALLOWING = new Set(["Allow"]);'),
  m("inbound: no matching from rule allows", "policy", "extproc/policy/decide/mtp.ts", "if (allowing.length === 0) {", "if (allowing.length === 0 && matches.length > 0) {"),
  m("inbound: a 429 drops the fault delay", "policy", "extproc/policy/decide/inbound.ts", "if (state.delayMs > 0) reply.delayMs = state.delayMs;", ""),
  m("faults: percentage inverted", "policy", "extproc/policy/decide/faults.ts", "return random() * 100 < p;", "return random() * 100 >= p;"),
  m("faults: elements after an abort still run", "policy", "extproc/policy/decide/faults.ts", "return { delayMs, abort: { httpStatus: f.abort.httpStatus, element } };", "{ for (let k = element + 1; k < faults.length; k++) if (faults[k].delay && hitPercent(faults[k].delay.percent, random)) delayMs += faults[k].delay.ms; return { delayMs, abort: { httpStatus: f.abort.httpStatus, element } }; }"),
  m("faults: delays not summed", "policy", "extproc/policy/decide/faults.ts", "delayMs += f.delay.ms;", "delayMs = f.delay.ms;"),
  m("routes: PathPrefix matches inside a segment", "policy", "extproc/policy/plans/routes.ts", "path.startsWith(`${v}/`)", "path.startsWith(v)"),
  m("routes: method ignored", "policy", "extproc/policy/plans/routes.ts", "if (m.method && req.method.toUpperCase() !== m.method) return false;", ""),
  m("routes: header type Absent ignored", "policy", "extproc/policy/plans/routes.ts", "if (have !== undefined) return false;", ""),
  m("routes: regular expressions not anchored", "policy", "extproc/policy/plans/routes.ts", "new RegExp(`^(?:${s})$`)", "new RegExp(s)"),
  m("routes: missing query parameter matches", "policy", "extproc/policy/plans/routes.ts", "if (have === null) return false;", ""),
  m("routes: lowest-priority route's rules first", "policy", "extproc/policy/plans/routes.ts", ".sort((a, b) => b.pos - a.pos)", ".sort((a, b) => a.pos - b.pos)"),
  m("rate-limit: fill time drifts to now", "policy", "extproc/policy/decide/rate-limit.ts", "this.lastFillMs += fills * this.intervalMs;", "this.lastFillMs = nowMs;"),
  m("rate-limit: a partial interval refills", "policy", "extproc/policy/decide/rate-limit.ts", "Math.floor((nowMs - this.lastFillMs) / this.intervalMs)", "Math.ceil((nowMs - this.lastFillMs) / this.intervalMs)"),
  m("rate-limit: refill one ms late", "policy", "extproc/policy/decide/rate-limit.ts", "Math.floor((nowMs - this.lastFillMs) / this.intervalMs)", "Math.floor((nowMs - this.lastFillMs - 1) / this.intervalMs)"),
  m("rate-limit: refill beyond capacity", "policy", "extproc/policy/decide/rate-limit.ts", "Math.min(this.capacity, this.tokens + fills * this.capacity)", "this.tokens + fills * this.capacity"),
  m("rate-limit: a dry run takes a token", "policy", "extproc/policy/decide/rate-limit.ts", "if (!dryRun) this.tokens -= 1;", "this.tokens -= 1;"),
  m("rate-limit: disabled ignored", "policy", "extproc/policy/plans/limit-plan.ts", "http.disabled === true ||", ""),
  // policy engine: identity and engine defaults
  m("identity: other trust domains accepted", "policy", "extproc/policy/decide/identity.ts", "if (spiffe && spiffe[1] === mesh)", "if (spiffe)"),
  m("identity: first XFCC element used, not the nearest", "policy", "extproc/policy/decide/identity.ts", 'const last = header.slice(header.lastIndexOf(",") + 1);', 'const last = header.split(",")[0];'),
  m("identity: peer certificate ignored", "policy", "extproc/policy/decide/identity.ts", "if (input.peerUriSans.length > 0) {", "if (false) {"),
  m("engine: x-kuma-tags trusted by default", "policy", "extproc/policy/decide/engine.ts", "trustKumaTagsHeader: this.opts.trustKumaTagsHeader ?? false", "trustKumaTagsHeader: this.opts.trustKumaTagsHeader ?? true"),
  m("engine: allow before the first sync by default", "policy", "extproc/policy/decide/engine.ts", 'this.opts.beforeFirstSync === "allow" ?', 'this.opts.beforeFirstSync !== "deny" ?'),
  m("engine: shadow deny not logged", "policy", "extproc/policy/decide/engine.ts", 'if (e.action === "shadow-deny") {', "if (false) {"),
  m("flags: --trust-kuma-tags-header defaults to true", "config", "extproc/config/sidecar.ts", 'type: "bool", default: false, help: "Take client tags from x-kuma-tags', 'type: "bool", default: true, help: "Take client tags from x-kuma-tags'),
  m("flags: --before-first-sync defaults to allow", "config", "extproc/config/sidecar.ts", 'values: ["allow", "deny"], default: "deny"', 'values: ["allow", "deny"], default: "allow"'),
  // RequestProcessor and header mapping
  m("processor: request phase after the response phase accepted", "processor", "extproc/transport/processor.ts", 'if (isRequest && this.response !== "none") return', "if (false) return"),
  m("processor: body after trailers accepted", "processor", "extproc/transport/processor.ts", '(next === "body" && (stage === "headers" || stage === "body"))', '(next === "body" && stage !== "none")'),
  m("processor: messages after an immediate response accepted", "processor", "extproc/transport/processor.ts", "this.finished = true;", ""),
  m("processor: response phase always skipped", "processor", "extproc/transport/processor.ts", "reply: continueRequestHeaders(decision.requestHeaders, !needsResponse,", "reply: continueRequestHeaders(decision.requestHeaders, true,"),
  m("processor: stream ended despite a response phase", "processor", "extproc/transport/processor.ts", "endStream: !needsResponse && headers.endOfStream,", "endStream: headers.endOfStream,"),
  m("processor: delay ignores the headroom", "processor", "extproc/transport/processor.ts", "if (wantedMs + delayHeadroomMs(messageTimeoutMs) <= messageTimeoutMs)", "if (wantedMs <= messageTimeoutMs)"),
  m("processor: no override_message_timeout when Envoy allows it", "processor", "extproc/transport/processor.ts", "if (extendedMs <= maxMessageTimeoutMs) return", "if (false) return"),
  m("processor: no minimum headroom", "processor", "extproc/transport/processor.ts", "Math.max(20, Math.round(timerMs / 10))", "Math.round(timerMs / 10)"),
  m("processor: a capped delay keeps no headroom", "processor", "extproc/transport/processor.ts", "const allowed = Math.max(0, ceilingMs - delayHeadroomMs(ceilingMs));", "const allowed = ceilingMs;"),
  m("processor: request body end ignores the response phase", "processor", "extproc/transport/processor.ts", "endStream: msg.request.requestBody.endOfStream && !this.needsResponsePhase()", "endStream: msg.request.requestBody.endOfStream"),
  m("processor: request trailers always end the stream", "processor", "extproc/transport/processor.ts", "endStream: !this.needsResponsePhase() }", "endStream: true }"),
  m("processor: observability-mode messages answered", "processor", "extproc/transport/processor.ts", "if (msg.observabilityMode) return", "if (false) return"),
  m("processor: gRPC requests denied like HTTP ones", "processor", "extproc/transport/processor.ts", 'const isGrpc = (facts.headers.get("content-type") ?? "").startsWith("application/grpc");', "const isGrpc = false;"),
  m("headers: repeated cookies joined with a comma", "processor", "extproc/transport/headers.ts", 'return previous + (key === "cookie" ? "; " : ",") + value;', 'return previous + "," + value;'),
  m("identity cache: peer certificate left out of the key", "policy", "extproc/policy/decide/identity.ts", 'input.peerUriSans.length === 0 && kumaTags === "" && sni === ""', 'kumaTags === "" && sni === ""'),
  m("policy dir: safety rescan at the fast pace while watched", "source", "extproc/policy-source/dir-source.ts", "this.watcher ? (this.opts.watchedRescanIntervalMs ?? WATCHED_RESCAN_INTERVAL_MS) :", "false ? 0 :"),
  // gRPC transport
  m("grpc: compressed messages read as plain", "transport", "extproc/transport/grpc-wire.ts", "if (compressed !== 0)", "if (false)"),
  m("grpc: no receive limit", "transport", "extproc/transport/grpc-wire.ts", "if (length > this.maxMessageBytes)", "if (false)"),
  m("grpc: a truncated last message ignored", "transport", "extproc/transport/grpc-call.ts", "if (this.reader.bufferedBytes > 0)", "if (false)"),
  // "half-close decided before a reset shows" (halfClose at once instead of setImmediate) is gone: since a stream's
  // end is counted when it closes (cancel for a reset, whatever the handler did before), it changes nothing a client
  // or a metric sees.
  m("grpc: a live Unix socket taken over", "transport", "extproc/transport/grpc-server.ts", "(await staleSocket(target.path))", "existsSync(target.path)"),
  m("decoder: end_of_stream ignored", "transport", "extproc/transport/request-decoder.ts", "headers.endOfStream = reader.bool();", "reader.bool();"),
  m("decoder: attributes of a headers phase dropped", "transport", "extproc/transport/request-decoder.ts", "headers.attributes[entry.key] = entry.value;", "void entry;"),
  m("decoder: an unknown field ends the message", "transport", "extproc/transport/request-decoder.ts", "if ((tag & 7) === 4 || tag === 0) return false;", "return false;"),
  m("headers: raw_value ignored", "processor", "extproc/transport/headers.ts", "if (n === 0) return h.value;", "return h.value;"),
  // drain controller
  m("drain: minimum drain time ignored", "drain", "extproc/drain/controller.ts", "if (now < minUntilMs) {", "if (false) {"),
  m("drain: deadline doubled", "drain", "extproc/drain/controller.ts", "this.deadlineMs = mode === \"drain\" ? this.sinceMs + this.opts.drainTimeMs :", "this.deadlineMs = mode === \"drain\" ? this.sinceMs + 2 * this.opts.drainTimeMs :"),
  m("drain: control plane told before Envoy", "drain", "extproc/drain/controller.ts",
    'await this.drainingStep("envoy_healthcheck_fail", () => this.effects.failEnvoyHealthchecks());',
    'await this.drainingStep("control_plane_draining", () => this.effects.markDraining()); await this.drainingStep("envoy_healthcheck_fail", () => this.effects.failEnvoyHealthchecks());'),
  m("drain: deregistration skipped", "drain", "extproc/drain/controller.ts", 'await this.steps.step("control_plane_deregister", () => this.effects.deregister(), this.opts.callTimeoutMs);', ""),
  m("drain: leaves with one request in flight", "drain", "extproc/drain/controller.ts", "if (read.value === 0) {", "if (read.value <= 1) {"),
  m("drain: second signal forces", "drain", "extproc/drain/controller.ts", 'this.signals === 2 ? "hurry" : "force"', 'this.signals === 2 ? "force" : "force"'),
  m("drain: start not idempotent", "drain", "extproc/drain/controller.ts", 'if (this.phaseNow !== "serving") return this.done;', ""),
  m("drain: hurry does not wake the wait", "drain", "extproc/drain/step-runner.ts", "for (const wake of this.hurryWaiters) wake();", ""),
  m("drain: steps still run after a hurry", "drain", "extproc/drain/controller.ts", "if (this.hurried || this.isDone()) {", "if (this.isDone()) {"),
  m("drain: a pre-wait call may outlive the deadline", "drain", "extproc/drain/controller.ts", "Math.max(0, Math.min(this.opts.callTimeoutMs, this.remainingMs()))", "this.opts.callTimeoutMs"),
  m("drain: the last poll sleeps past the deadline", "drain", "extproc/drain/controller.ts", "await this.steps.sleepUnlessHurried(Math.min(this.opts.pollIntervalMs, left));", "await this.steps.sleepUnlessHurried(this.opts.pollIntervalMs);"),
  m("drain: servers closed before Envoy stops", "drain", "extproc/drain/controller.ts",
    'await this.steps.step("stop_envoy", () => this.effects.stopEnvoy(), this.opts.stopTimeoutMs); if (this.isDone()) return; await this.steps.step("close_servers", () => this.effects.closeServers(), this.opts.stopTimeoutMs);',
    'await this.steps.step("close_servers", () => this.effects.closeServers(), this.opts.stopTimeoutMs); if (this.isDone()) return; await this.steps.step("stop_envoy", () => this.effects.stopEnvoy(), this.opts.stopTimeoutMs);'),
  // atomic file store
  m("atomic: target written in place", "atomic", "extproc/atomic-file.ts", "const tmp = join(dir, `${TEMP_PREFIX}${basename(path)}.${process.pid}.${randomBytes(4).toString(\"hex\")}`);", "const tmp = path; void basename; void randomBytes;"),
  m("atomic: temp file left behind when the rename fails", "atomic", "extproc/atomic-file.ts", "await rename(tmp, path); } catch (err) { await unlink(tmp).catch(() => { });", "await rename(tmp, path); } catch (err) {"),
  m("atomic: removing a missing file fails", "atomic", "extproc/atomic-file.ts", 'if (err.code !== "ENOENT") throw err;', "throw err;"),
  m("atomic: parent directory not created", "atomic", "extproc/atomic-file.ts", "await mkdir(dir, { recursive: true });", ""),
  // inject: ContainerPatch order
  m("inject: patches applied in reverse order", "inject", "extproc/inject/patch.ts", "for (const patch of patches) {", "for (const patch of [...patches].reverse()) {"),
  m("inject: operations applied in reverse order", "inject", "extproc/inject/patch.ts", "for (const [i, operation] of patch[field].entries()) {", "for (const [i, operation] of [...patch[field].entries()].reverse()) {"),
  m("inject: annotation names sorted", "inject", "extproc/inject/plan.ts", 'return typeof listed === "string" ? splitNames(listed) : undefined;', 'return typeof listed === "string" ? splitNames(listed).sort() : undefined;'),
  m("inject: patch operation not cloned", "inject", "extproc/inject/patch.ts", "structuredClone(operation)", "operation"),
  m("inject: a failing operation is skipped, not fatal", "inject", "extproc/inject/patch.ts", "catch (err) { return { ok: false,", "catch (err) { if (err) continue; return { ok: false,"),
  m("inject: no annotation means no default patches", "inject", "extproc/inject/plan.ts", "return [...defaults];", "return [];"),
  m("inject: a longer grace period is lowered", "inject", "extproc/inject/plan.ts", 'if (!(typeof grace === "number" && grace >= rendered.terminationGracePeriodSeconds)) {', "if (true) {"),
  m("inject: re-injection rewrites equal containers", "inject", "extproc/inject/plan.ts", "if (!isDeepStrictEqual(original.get(item.name), item))", "if (true)"),
  // idle trim (extproc/idle-trim.ts)
  m("idle trim: a check at exactly the CPU limit counts as busy", "runtime", "extproc/idle-trim.ts", "sample.cpuMicros - last <= this.limits.quietMaxCpuMicros", "sample.cpuMicros - last < this.limits.quietMaxCpuMicros"),
  m("idle trim: one quiet check is enough", "runtime", "extproc/idle-trim.ts", "this.quietChecks >= this.limits.quietChecks", "this.quietChecks >= 1"),
  m("idle trim: trims a young generation that never grew", "runtime", "extproc/idle-trim.ts", "&& sample.youngCommittedBytes > this.limits.grownAboveBytes;", ";"),
  m("idle trim: retried every quiet check after V8 kept the space", "runtime", "extproc/idle-trim.ts", "this.lastCpuMicros = after.cpuMicros; this.armed = false;", "this.lastCpuMicros = after.cpuMicros;"),
];
