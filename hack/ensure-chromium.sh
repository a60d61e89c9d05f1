#!/usr/bin/env bash
# Debian's chromium for the dashboard's browser tests (Playwright drives it and never downloads
# a browser of its own). Installs it with apt when it is missing and we are root; otherwise says
# why the browser tests will be skipped. Idempotent.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing and cannot be installed here (needs root and apt):" \
       "the dashboard's browser tests will be skipped" >&2
  exit 0
fi
echo "installing Debian's chromium for the browser tests" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  chromium chromium-driver fonts-dejavu-core >/dev/null
