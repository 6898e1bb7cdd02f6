#!/usr/bin/env bash
# Installs what the test suite needs besides npm packages: redis-server (Debian package), for
# the tests that run the bot against a real Redis. Does nothing when it is already there.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  echo "redis-server: $(redis-server --version | head -c 40)"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "redis-server is missing: install the Debian package redis-server (as root: apt-get install -y redis-server)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
# The package starts a system server on 6379; the tests start their own on free ports.
(command -v systemctl >/dev/null 2>&1 && $SUDO systemctl disable --now redis-server >/dev/null 2>&1) || true
echo "redis-server: $(redis-server --version | head -c 40)"
