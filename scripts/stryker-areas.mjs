// The areas `npm run mutation:stryker` mutates, each with the source files Stryker mutates and the test
// files run for every one of its mutants (the tests that exercise that area directly; real binaries, but no real
// Envoy: `meshext run` is driven with test/drain/fake-envoy-process.ts). Left out: property tests that compare two
// paths through the same code (incremental vs full apply, YAML text vs value) and take seconds: they reach thousands
// of mutants, kill few that others miss, and every survivor among those would run them (8 s each). Below them, which of
// an area's files a run mutates (all, those changed since a commit, those named by --files).

export const STRYKER_AREAS = {
  admin: {
    mutate: ["extproc/admin/**/*.ts"],
    tests: ["test/admin/access.test.ts", "test/admin/server.test.ts", "test/admin/metrics.test.ts", "test/hardening/request-target.test.ts"],
  },
  "decision-log": {
    mutate: ["extproc/decision-log/**/*.ts"],
    tests: ["test/decision-log/writer.test.ts", "test/decision-log/sample-zero.test.ts", "test/decision-log/query-string.test.ts", "test/decision-log/full-disk.test.ts",
      "test/decision-log/push.test.ts", "test/decision-log/pusher.test.ts", "test/decision-log/sidecar.test.ts", "test/decision-log/fifo.test.ts",
      "test/decision-log/record.test.ts", "test/decision-log/rotating-file.test.ts", "test/decision-log/recorder.test.ts"],
  },
  drain: {
    mutate: ["extproc/drain/**/*.ts"],
    tests: ["test/drain/controller.test.ts", "test/drain/forever.test.ts", "test/drain/skipped-steps.test.ts", "test/drain/contract.test.ts", "test/drain/install.test.ts", "test/drain/admin-client.test.ts",
      "test/drain/envoy-admin.test.ts", "test/drain/quiesce.test.ts", "test/drain/process.test.ts", "test/drain/forever-process.test.ts", "test/drain/drain-log.test.ts", "test/drain/routes.test.ts",
      "test/drain/metrics.test.ts", "test/drain/step-runner.test.ts", "test/drain/signals.test.ts",
      "test/drain/controller-force.test.ts", "test/drain/envoy-child.test.ts",
      "test/drain/controller-edges.test.ts", "test/drain/install-settings.test.ts", "test/drain/envoy-admin-edges.test.ts",
      "test/drain/envoy-child-kill-refused.test.ts"],
  },
  transport: {
    mutate: ["extproc/transport/grpc-*.ts"],
    tests: ["test/transport/grpc-wire.test.ts", "test/transport/grpc-server.test.ts", "test/transport/grpc-edges.test.ts", "test/transport/cancel.test.ts", "test/transport/rapid-reset.test.ts", "test/transport/cancel-races.test.ts",
      "test/transport/grpc-call-writes.test.ts", "test/transport/grpc-server-errors.test.ts",
      "test/transport/grpc-server-rotation.test.ts", "test/transport/grpc-call-resets.test.ts"],
  },
  "policy-source": {
    mutate: ["extproc/policy-source/**/*.ts"],
    // Left out (they stay in the suite): the process-level tests, whose real sidecars and control planes took 2–6 s a
    // test and reached ~1 100 mutants each, so that every survivor ran them: policy-set-sidecar, mesh-identity-sidecar,
    // silent-control-plane, version-detect-cli, and sync-budget-pages (2 000 HTTP pages, 6 s). The policy-source
    // paths they reach are reached and checked in process by from-config (flags → dataplane, registration of a
    // --dataplane-file document and its draining, the switch from the lists to the dataplane's own set once registered,
    // key order in the set's Dataplane), dataplane-file-watch, policy-set-source, mesh-identity-lists, version-detect and
    // sync-budget (the page budget shared by a sync's lists).
    tests: [
      "test/policy-source/last-good.test.ts", "test/policy-source/fail-closed.test.ts", "test/policy-source/http-source.test.ts", "test/policy-source/bounded-lists.test.ts",
      "test/policy-source/dataplane-client.test.ts", "test/policy-source/version-detect.test.ts", "test/policy-source/mesh-resources.test.ts", "test/policy/dir-source.test.ts",
      "test/policy-source/dir-change-cost.test.ts", "test/policy-source/dir-rescan-reads.test.ts", "test/policy-source/engine-e2e.test.ts", "test/policy-source/ghost-dataplane.test.ts",
      "test/policy-source/incremental-apply.test.ts", "test/policy-source/kuma-compat.test.ts", "test/policy-source/paced-long-poll.test.ts", "test/policy-source/policy-set-delta.test.ts",
      "test/policy-source/policy-set-source.test.ts", "test/policy-source/sync-budget.test.ts", "test/policy-source/mesh-identity-lists.test.ts",
      "test/policy-source/from-config.test.ts", "test/policy-source/dataplane-file-watch.test.ts", "test/policy-source/in-place-edits.test.ts",
      "test/policy-source/backoff.test.ts", "test/policy-source/cache-file.test.ts", "test/policy-source/http-rejected.test.ts",
      "test/properties/json-slices.test.ts", "test/policy-source/json-slices-cases.test.ts", "test/policy-source/policy-file.test.ts",
      "test/policy-source/parse-in-worker.test.ts", "test/policy-source/document-items.test.ts", "test/policy-source/file-documents.test.ts",
      "test/policy-source/dir-scan.test.ts", "test/policy-source/last-good-rules.test.ts", "test/policy-source/policy-set-reader.test.ts",
      "test/policy-source/key-filter.test.ts", "test/policy-source/kuma-client.test.ts", "test/policy-source/http-source-status.test.ts",
      "test/policy-source/http-get.test.ts", "test/policy-source/dir-rejected-dropped.test.ts",
      "test/policy-source/dir-source-scan.test.ts", "test/policy-source/dir-source-timers.test.ts", "test/policy-source/dir-source-threads.test.ts",
      "test/policy-source/http-source-loop.test.ts", "test/policy-source/http-source-stop.test.ts", "test/policy-source/http-source-logs.test.ts",
      "test/policy-source/http-source-apply.test.ts", "test/policy-source/http-source-set.test.ts",
      "test/policy-source/dataplane-client-edges.test.ts", "test/policy-source/http-get-connections.test.ts", "test/policy-source/http-policy-set-bodies.test.ts",
      "test/policy-source/kuma-client-pages.test.ts",
    ],
  },
  "control-plane": {
    mutate: ["extproc/control-plane/**/*.ts"],
    tests: [
      "test/control-plane/api.test.ts", "test/control-plane/watch.test.ts", "test/control-plane/list-consistency.test.ts", "test/control-plane/safety.test.ts",
      "test/control-plane/store-edges.test.ts", "test/control-plane/names-and-paths.test.ts", "test/control-plane/dataplanes.test.ts", "test/control-plane/mesh-and-services.test.ts",
      "test/control-plane/inspect.test.ts", "test/control-plane/metrics.test.ts", "test/control-plane/container-patches.test.ts",
      "test/control-plane/atomic-file.test.ts", "test/control-plane/decision-samples.test.ts", "test/control-plane/dry-run.test.ts", "test/control-plane/heartbeat-queue.test.ts",
      "test/control-plane/long-poll-scale.test.ts", "test/control-plane/mesh-identity.test.ts", "test/control-plane/policy-set.test.ts", "test/control-plane/turn-slices.test.ts",
      "test/control-plane/up.test.ts", "test/control-plane/kill9.test.ts", "test/properties/rest-router.test.ts",
      "test/control-plane/validate.test.ts", "test/control-plane/paging.test.ts", "test/control-plane/problems.test.ts", "test/control-plane/seed.test.ts",
      "test/control-plane/policy-sets.test.ts", "test/control-plane/store.test.ts",
      "test/control-plane/decision-sample-routes.test.ts", "test/control-plane/server.test.ts",
      "test/control-plane/routes.test.ts", "test/control-plane/mesh-routes.test.ts", "test/control-plane/policy-set-routes.test.ts", "test/control-plane/inspect-routes.test.ts",
      "test/control-plane/global-routes.test.ts", "test/hardening/request-target.test.ts",
      "test/control-plane/decision-samples-evict.test.ts",
      "test/control-plane/dry-run-what-if-samples.test.ts", "test/control-plane/dry-run-reply.test.ts",
      "test/control-plane/server-long-poll-intake.test.ts",
    ],
  },
  policy: {
    mutate: ["extproc/policy/**/*.ts"],
    tests: [
      "test/policy/conformance.test.ts", "test/policy/engine.test.ts", "test/policy/precedence-merge.test.ts", "test/policy/match.test.ts", "test/policy/identity.test.ts",
      "test/policy/explain.test.ts", "test/policy/rate-limit.test.ts", "test/policy/rate-limit-layers.test.ts", "test/policy/shadow-deny.test.ts", "test/policy/mtp-rules.test.ts",
      "test/policy/route-order.test.ts", "test/policy/mesh-mtls.test.ts", "test/policy/select.test.ts", "test/policy/validate.test.ts", "test/policy/faults.test.ts",
      "test/policy/route-drops.test.ts", "test/policy/per-client-plans.test.ts", "test/policy/inspect.test.ts", "test/policy/kuma-version.test.ts", "test/policy/version-rows.test.ts",
      "test/policy/header-value-validation.test.ts", "test/policy/kind-registry.test.ts", "test/policy/resource-name.test.ts", "test/policy/from-region-merges.test.ts",
      "test/policy/compile-memos.test.ts", "test/policy/destinations.test.ts", "test/policy/subset-grouping.test.ts",
      "test/policy/parse-async.test.ts", "test/policy/go-template.test.ts", "test/hardening/yaml-limits.test.ts",
      "test/properties/simple-yaml.test.ts", "test/properties/yaml-scan.test.ts", "test/policy/engine-edges.test.ts", "test/policy/mesh-identity-validate.test.ts",
      "test/policy/dataplane-document.test.ts", "test/policy/identity-parsing.test.ts", "test/policy/route-filters.test.ts", "test/policy/duration.test.ts",
      "test/policy/rule-matches-validation.test.ts", "test/policy/resource-documents.test.ts", "test/policy/compact.test.ts",
      "test/policy/go-template-words.test.ts", "test/policy/simple-yaml-subset.test.ts", "test/policy/yaml-scan-small.test.ts",
      "test/policy/policy-envelope.test.ts", "test/policy/parse-simple.test.ts", "test/policy/parse-documents.test.ts", "test/policy/issues.test.ts",
      "test/policy/policy-meta.test.ts", "test/policy/mesh-identity-select.test.ts", "test/policy/inspect-views.test.ts",
      "test/policy/validate-rules.test.ts", "test/policy/validate-confs.test.ts", "test/policy/validate-route.test.ts", "test/policy/validate-target-ref.test.ts",
      "test/policy/decision-trace.test.ts",
      // the policy engine's views and documents as the control plane serves them (inspect goldens, Dataplane and
      // MeshIdentity resources), its decisions through the request processor, and the decision log's audit
      "test/control-plane/inspect.test.ts", "test/control-plane/dataplanes.test.ts", "test/control-plane/mesh-identity.test.ts", "test/transport/processor.test.ts",
      "test/properties/request-processor.test.ts", "test/policy/selection-sidecar.test.ts", "test/policy/first-load-rejections.test.ts", "test/decision-log/recorder.test.ts",
      "test/config/security-defaults.test.ts",
      "test/policy/inbound-steps.test.ts", "test/policy/engine-reload.test.ts", "test/policy/engine-answers.test.ts",
      "test/policy/identity-xfcc.test.ts", "test/policy/mtp-outcomes.test.ts", "test/policy/outbound-decide.test.ts", "test/policy/route-filters-edges.test.ts",
      "test/policy/rules-layers.test.ts",
      "test/policy/go-template-grammar.test.ts", "test/policy/policy-set.test.ts",
      "test/policy/routes-plan.test.ts",
      "test/policy/inbound-rules.test.ts",
      "test/policy/from-items.test.ts",
      "test/policy/subset-groups.test.ts", "test/policy/rules.test.ts",
      "test/policy/compile-plan.test.ts",
      "test/policy/compact-copies.test.ts", "test/policy/compact-detach-nothing.test.ts", "test/policy/normalize-role.test.ts", "test/policy/parse-limits.test.ts",
      "test/policy/simple-yaml-reader.test.ts", "test/policy/yaml-limits-shape.test.ts",
      "test/policy/inspect-dataplane-view.test.ts", "test/policy/explain-report.test.ts", "test/policy/inspect-rules-wire.test.ts", "test/policy/inspect-kri-views.test.ts",
      "test/policy/kinds-validate.test.ts", "test/policy/resources-read.test.ts", "test/policy/select-might.test.ts", "test/policy/client-key.test.ts",
      "test/policy/validate-rules-only.test.ts", "test/policy/validate-spec.test.ts",
      "test/policy/yaml-limits-scan-states.test.ts",
      "test/policy/validate-items.test.ts", "test/policy/yaml-bounds.test.ts",
      "test/policy/go-template-delimiters.test.ts",
      "test/policy/go-template-pipes.test.ts", "test/policy/go-template-branches.test.ts",
    ],
  },
};

// Whether `file` matches one of the areas' glob forms ("dir/**/*.ts", "dir/name-*.ts").
export function globMatches(file, glob) {
  const re = glob
    .split("**/")
    .map((part) => part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*"))
    .join("(?:.*/)?");
  return new RegExp(`^${re}$`).test(file);
}

/** The mutate list for an area: every file, or (incremental) only the changed ones, narrowed to `only` when given; undefined = skip. */
export function mutateFor(area, changed, only) {
  const inArea = (f) => area.mutate.some((g) => globMatches(f, g));
  const files =
    !changed || area.tests.some((t) => changed.includes(t))
      ? (only ? only.filter(inArea) : area.mutate)
      : changed.filter((f) => inArea(f) && (!only || only.some((g) => globMatches(f, g))));
  return files.length > 0 ? files : undefined;
}
