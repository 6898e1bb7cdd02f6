#!/usr/bin/env bash
# Installs what the test suite needs besides npm packages, from Debian's packages:
# - redis-server, for the tests that run the bot against a real Redis;
# - prometheus (with promtool), for test/deploy/prometheus.test.ts;
# - kubectl (Debian's package kubernetes-client, when no kubectl is on the machine), for
#   test/deploy/kubernetes.test.ts (`kubectl kustomize`).
# Installs only what is missing; does nothing when all are there.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
{ command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || missing+=(prometheus)
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "missing Debian packages: ${missing[*]} (as root: apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The packages start system servers (redis on 6379, prometheus on 9090); the tests start their own on free ports.
  if command -v systemctl >/dev/null 2>&1; then
    for service in redis-server prometheus prometheus-node-exporter; do
      $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
    done
  fi
fi
echo "redis-server: $(redis-server --version | head -c 40)"
echo "prometheus: $(prometheus --version 2>&1 | head -n 1)"
echo "kubectl: $(kubectl version --client 2>&1 | head -n 1)"
