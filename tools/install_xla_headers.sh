#!/usr/bin/env bash
# Installs the headers TensorFlow's tf2xla headers include but its wheel does
# not ship (highwayhash, farmhash), from Debian, unless they are there: our
# XLA kernels (cc/kernels/xla/xla_kernels.cc) build against them.
set -euo pipefail
if [ -f /usr/include/highwayhash/arch_specific.h ] && [ -f /usr/include/farmhash.h ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libhighwayhash-dev libfarmhash-dev >/dev/null
