// Keeps requests flowing for the kubelet-style tests: N loops, each sending one request after the
// other (a new connection each time, as clients picking an endpoint do) to the URL, printing one JSON
// line per outcome, until SIGTERM. An https URL takes a certificate folder and a client name: the
// client presents NAME.crt/NAME.key and trusts ca.crt, as a mesh client with its workload identity does.
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";

const [url, concurrencyText, certDir, client] = process.argv.slice(2) as [string, string, string?, string?];
const concurrency = Number(concurrencyText) || 4;
// A mesh client checks the server's SPIFFE ID, not a host name: the pod IP is in no certificate.
const tls = certDir && client
  ? { ca: readFileSync(join(certDir, "ca.crt")), cert: readFileSync(join(certDir, `${client}.crt`)), key: readFileSync(join(certDir, `${client}.key`)), checkServerIdentity: () => undefined }
  : {};
const request = url.startsWith("https:") ? httpsRequest : httpRequest;
let stopping = false;

function once(): Promise<void> {
  return new Promise((resolve) => {
    const startedMs = Date.now();
    const req = request(url, { agent: false, timeout: 5000, ...tls }, (res) => {
      res.resume();
      res.on("end", () => {
        process.stdout.write(JSON.stringify({ load: "response", status: res.statusCode, startedMs, atMs: Date.now() }) + "\n");
        resolve();
      });
    });
    req.on("error", (err: Error & { code?: string }) => {
      process.stdout.write(JSON.stringify({ load: "error", error: err.code ?? err.message, startedMs, atMs: Date.now() }) + "\n");
      setTimeout(resolve, 20);
    });
    req.end();
  });
}

async function loop(): Promise<void> {
  while (!stopping) await once();
}
process.on("SIGTERM", () => (stopping = true));
await Promise.all(Array.from({ length: concurrency }, loop));
process.exit(0);
