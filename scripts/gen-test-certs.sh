#!/usr/bin/env bash
# Throwaway mTLS certificates for envoy/envoy-mtls.yaml: a CA, a server certificate for the inbound listener and a
# client certificate, each carrying a SPIFFE URI SAN the way Kuma issues them (spiffe://<mesh>/<service>).
# Writes to envoy/certs/ (or $1), which git ignores: never commit keys. Needs openssl >= 1.1.1.
# More client certificates: NAME=URI arguments after the folder (e.g. bot=spiffe://default.z1.mesh.local/ns/shop/sa/bot)
# write NAME.crt and NAME.key with that URI SAN; SERVER_URI and CLIENT_URI replace the default two identities.
set -euo pipefail

out="${1:-envoy/certs}"
mesh="${MESH:-default}"
days=30
mkdir -p "$out"
cd "$out"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
  -subj "/CN=meshext test CA" -keyout ca.key -out ca.crt \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

# leaf NAME URI USAGE [extra SAN]
leaf() {
  local name=$1 uri=$2 usage=$3 extra=${4:-}
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" \
    -keyout "$name.key" -out "$name.csr" 2>/dev/null
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=%s\nsubjectAltName=URI:%s%s\n' \
    "$usage" "$uri" "$extra" > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days "$days" \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

leaf server "${SERVER_URI:-spiffe://$mesh/backend}" serverAuth ",DNS:localhost,IP:127.0.0.1"
leaf client "${CLIENT_URI:-spiffe://$mesh/web}" clientAuth
shift || true
for extra in "$@"; do
  leaf "${extra%%=*}" "${extra#*=}" clientAuth
done
rm -f ca.srl
chmod 0644 ./*.crt ./*.key # Envoy reads them as the non-root envoy user in the image
echo "gen-test-certs: wrote $(pwd)/{ca.crt,server.crt,server.key,client.crt,client.key}${*:+ and $*} (mesh $mesh)"
