// `meshext webhook`: the mutating admission webhook. Serves AdmissionReview v1 over TLS and answers each
// with the JSONPatch the `meshext inject` injector produces for the object, so both inject the same bytes.
import { ConfigError, formatHelp, type FlagSpec, resolveFlags } from "../config/flags.js";
import { patchSourceFor } from "../inject/patch-source.js";
import { renderSidecars } from "../inject/render.js";
import { INJECT_ENV_PREFIX, INJECT_FLAGS, injectSettingsFrom } from "../inject/settings.js";
import { createLogger } from "../log.js";
import type { FailurePolicy } from "../webhook/admission.js";
import { startWebhookServer } from "../webhook/server.js";
import { Registry } from "prom-client";

const USAGE = "meshext webhook --tls-cert-file FILE --tls-key-file FILE [inject flags]";
const SUMMARY =
  "Serves the mutating admission webhook: POST /inject takes AdmissionReview v1 (HTTPS) and answers with the JSONPatch\n" +
  "that `meshext inject` would apply, honouring the same opt-outs and flags. GET /healthz answers once serving.\n" +
  "Deploy with envoy/kubernetes/webhook.yaml; its namespaceSelector picks namespaces labelled meshext.io/inject=enabled.";

export const WEBHOOK_FLAGS = [
  { key: "listen", flag: "listen", type: "hostport", default: "0.0.0.0:8443", help: "HTTPS address of the webhook." },
  { key: "tlsCertFile", flag: "tls-cert-file", type: "path", default: "", help: "PEM certificate (chain) served to the API server; read again when it changes." },
  { key: "tlsKeyFile", flag: "tls-key-file", type: "path", default: "", help: "PEM private key of --tls-cert-file; read again when it changes." },
  { key: "certCheckIntervalMs", flag: "cert-check-interval", type: "duration", default: 10_000, min: 100, help: "How often the certificate files are checked for a change." },
  { key: "failurePolicy", flag: "failure-policy", type: "enum", values: ["Ignore", "Fail"], default: "Ignore", help: "When injection is refused (a ContainerPatch fails, the patch source is down, a mesh conflict): Ignore admits the pod without a sidecar and warns; Fail rejects it." },
  { key: "logLevel", flag: "log-level", type: "enum", values: ["trace", "debug", "info", "warn", "error", "fatal", "silent"], default: "info", help: "Log level of the JSON log lines on stdout." },
  ...INJECT_FLAGS.filter((f) => f.key !== "file"),
] as const satisfies readonly FlagSpec[];

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // The same variables as `meshext inject` (MESHEXT_INJECT_*): the webhook injects what inject would.
  const parsed = resolveFlags(WEBHOOK_FLAGS, argv, env, INJECT_ENV_PREFIX);
  if (parsed.help) {
    process.stdout.write(formatHelp(USAGE, SUMMARY, WEBHOOK_FLAGS, INJECT_ENV_PREFIX));
    return 0;
  }
  if (parsed.rest.length > 0) throw new ConfigError(`unexpected arguments after --: ${parsed.rest.join(" ")}`);
  const v = parsed.values;
  if (!v.tlsCertFile || !v.tlsKeyFile) throw new ConfigError("--tls-cert-file and --tls-key-file are required (the API server calls webhooks over HTTPS only)");
  const settings = injectSettingsFrom(v);
  const sidecars = renderSidecars(settings);
  const log = createLogger(v.logLevel as "info");
  const registry = new Registry();
  let server;
  try {
    server = await startWebhookServer({
      listen: v.listen as string,
      certFile: v.tlsCertFile as string,
      keyFile: v.tlsKeyFile as string,
      certCheckIntervalMs: v.certCheckIntervalMs as number,
      context: async () => ({ sidecars, defaultPatches: settings.defaultPatches, source: await patchSourceFor(settings), failurePolicy: v.failurePolicy as FailurePolicy }),
      log: log.child({ component: "webhook" }),
      registry,
    });
  } catch (err) {
    throw new ConfigError(`cannot start: ${(err as Error).message}`);
  }
  log.info({ address: server.address }, "listening");
  await new Promise<void>((resolve) => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => resolve());
  });
  await server.close();
  return 0;
}
