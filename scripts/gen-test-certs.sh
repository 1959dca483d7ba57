#!/usr/bin/env bash
# Throwaway mTLS certificates for envoy/envoy-mtls.yaml: a CA, a server certificate for the inbound listener and a
# client certificate, each carrying a SPIFFE URI SAN the way Kuma issues them (spiffe://<mesh>/<service>).
# Writes to envoy/certs/ (or $1), which git ignores: never commit keys. Needs openssl >= 1.1.1.
set -euo pipefail

out="${1:-envoy/certs}"
mesh="${MESH:-default}"
days=30
mkdir -p "$out"
cd "$out"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
  -subj "/CN=meshext test CA" -keyout ca.key -out ca.crt \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

# leaf NAME SERVICE USAGE [extra SAN]
leaf() {
  local name=$1 service=$2 usage=$3 extra=${4:-}
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$service" \
    -keyout "$name.key" -out "$name.csr" 2>/dev/null
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=%s\nsubjectAltName=URI:spiffe://%s/%s%s\n' \
    "$usage" "$mesh" "$service" "$extra" > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days "$days" \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

leaf server backend serverAuth ",DNS:localhost,IP:127.0.0.1"
leaf client web clientAuth
# More client identities for tests: EXTRA_CLIENTS="orders bot" also writes client-orders.{crt,key}
# (spiffe://<mesh>/orders) and client-bot.{crt,key}.
for service in ${EXTRA_CLIENTS:-}; do
  [[ $service =~ ^[a-z0-9][a-z0-9-]*$ ]] || { echo "gen-test-certs: EXTRA_CLIENTS: bad service name $service" >&2; exit 2; }
  leaf "client-$service" "$service" clientAuth
done
rm -f ca.srl
chmod 0644 ./*.crt ./*.key # Envoy reads them as the non-root envoy user in the image
echo "gen-test-certs: wrote $(pwd)/{ca.crt,server.crt,server.key,client.crt,client.key} (mesh $mesh)"
