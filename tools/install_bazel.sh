#!/usr/bin/env bash
# Installs Debian's bazel 4.2.3 and its rules_java with apt (the build needs
# nothing else from the network: WORKSPACE) unless bazel is already there.
set -euo pipefail
if command -v bazel >/dev/null && [ -f /usr/share/bazel/rules/java/WORKSPACE ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq bazel-bootstrap bazel-rules-java >/dev/null
