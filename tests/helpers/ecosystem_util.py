"""Helpers for the ecosystem tests: fresh Python processes, free ports, the
op types of a traced function."""

import os
import signal
import socket
import subprocess
import sys
import textwrap

# the repository: this file is tests/helpers/ecosystem_util.py
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def python_env(**extra):
    """The environment for a child Python: the repository importable, TF quiet."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def start_python(code, env=None, cwd=None, **popen):
    """Starts `python -c code` in its own process group (so kill() takes its
    children too)."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], env=env or python_env(), cwd=cwd,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, **popen)


def kill(proc):
    """Kills the process group of a child started by start_python."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def run_python(code, timeout=120, env=None, cwd=None):
    """Runs `python -c code` to completion within `timeout` seconds; returns
    (returncode, stdout, stderr). The child is always gone afterwards."""
    proc = start_python(code, env=env, cwd=cwd)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        out, err = proc.communicate()
        raise AssertionError(f"child Python timed out after {timeout} s:\n{err[-3000:]}")
    finally:
        kill(proc)
    return proc.returncode, out, err


def free_ports(n):
    """n distinct TCP ports on 127.0.0.1 that were free a moment ago."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def traced_op_types(f, *args):
    """The op types of tf.function `f` traced for `args`, its inner
    functions' (gradients, control flow) included."""
    graph = f.get_concrete_function(*args).graph
    types = {op.type for op in graph.get_operations()}
    for fdef in graph.as_graph_def().library.function:
        types |= {node.op for node in fdef.node_def}
    return types
