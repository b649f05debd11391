#!/usr/bin/env bash
# build/clients-venv: the client libraries of tests/client_suites/requirements.txt
# over .venv's packages. A .pth file puts .venv's site-packages after the
# venv's own, so TensorFlow, numpy and pytest are .venv's (not installed
# twice) and what the libraries pin differently (protobuf, pillow) is
# installed here and found first; pip never touches .venv (it does not
# uninstall outside the venv it runs in). Kept while the requirements file
# and .venv's TensorFlow are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv=$root/build/clients-venv
main_site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
tfv=$(.venv/bin/python -c 'from importlib import metadata; print(metadata.version("tensorflow"))')
want="$(sha1sum tests/client_suites/requirements.txt | cut -c1-12) tensorflow==$tfv $main_site"
if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$want" ]; then
  rm -rf "$venv"
  .venv/bin/python -m venv "$venv"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$main_site" > "$site/_tso_main_venv.pth"
  # this venv's pip: .venv's packages count as installed, and one pinned
  # otherwise is installed here ("Not uninstalling ... outside environment")
  "$venv/bin/pip" install -q -r tests/client_suites/requirements.txt 2>&1 | {
    grep -v "^WARNING: Location .* is ignored" || true; }
  TF_USE_LEGACY_KERAS=1 TF_CPP_MIN_LOG_LEVEL=3 "$venv/bin/python" -c 'import tensorflow_gnn, tensorflow_recommenders, spektral, tf_keras' 2>/dev/null || {
    echo "client_venv.sh: the libraries do not import in $venv" >&2; exit 1; }
  echo "$want" > "$venv/.installed"
fi
