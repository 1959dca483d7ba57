#!/usr/bin/env bash
# Generates extproc/gen/ from the protos shipped in @grpc/grpc-js-xds (Envoy API) and grpc-health-check.
set -euo pipefail
cd "$(dirname "$0")/.."
xds=node_modules/@grpc/grpc-js-xds/deps
health=node_modules/grpc-health-check/proto
rm -rf extproc/gen
# buf needs each root as a module; paths are given explicitly so only what we use is generated.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/buf.yaml" <<YAML
version: v2
modules:
  - path: envoy-api
  - path: xds
  - path: googleapis
  - path: protoc-gen-validate
  - path: health
YAML
ln -s "$PWD/$xds/envoy-api" "$work/envoy-api"
ln -s "$PWD/$xds/xds" "$work/xds"
ln -s "$PWD/$xds/googleapis" "$work/googleapis"
ln -s "$PWD/$xds/protoc-gen-validate" "$work/protoc-gen-validate"
ln -s "$PWD/$health" "$work/health"
node_modules/.bin/buf generate "$work" --template scripts/buf.gen.yaml \
  --path "$work/envoy-api/envoy/service/ext_proc/v3/external_processor.proto" \
  --path "$work/health/health/v1/health.proto"
