// A throwaway self-signed certificate for loopback TLS servers in tests (openssl, into a temp dir).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCert {
  dir: string;
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

/** Why no certificate can be made here (openssl missing), or undefined. */
export function opensslUnavailable(): string | undefined {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "openssl is not installed (apt-get install openssl)";
  }
}

/** A P-256 certificate for `cn`, valid for localhost and 127.0.0.1, written to dir (a new temp dir by default). */
export function makeCert(cn = "localhost", dir = mkdtempSync(join(tmpdir(), "meshext-cert-"))): TestCert {
  const certFile = join(dir, "tls.crt");
  const keyFile = join(dir, "tls.key");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", `/CN=${cn}`, "-keyout", keyFile, "-out", certFile, "-addext", `subjectAltName=DNS:${cn},DNS:localhost,IP:127.0.0.1`],
    { stdio: "ignore" },
  );
  return { dir, certFile, keyFile, cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
}
