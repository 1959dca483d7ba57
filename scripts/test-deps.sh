#!/usr/bin/env bash
# Installs the Debian tools the test suite drives for real (promtool/prometheus), when missing.
# Runs as `pretest`; without root or apt it says what is missing and the tests that need it skip.
set -uo pipefail
need=()
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
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
