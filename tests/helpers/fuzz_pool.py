"""A pool of persistent worker processes (tests/helpers/fuzz_worker.py --worker),
one per core by default: the parent sends each a case spec (one JSON line)
and reads its answer (one JSON line). A worker that dies (a signal, an exit)
or does not answer in time fails that case only: the case is recorded as a
CRASH (with the exit status and the end of the worker's stderr) or a
TIMEOUT, the worker is replaced, and the next case runs in the new one.
The design of tests/test_bad_inputs.py's pool, with several workers."""

import json
import os
import queue
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # tests/helpers/..
WORKER = os.path.join(HERE, "fuzz_worker.py")
START_TIMEOUT_S = 300


def worker_env(extra=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **(extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(
        [ROOT, HERE] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


# What TensorFlow prints when it starts, whatever TF_CPP_MIN_LOG_LEVEL says.
NOISE = ("oneDNN custom operations", "cudart_stub", "All log messages before absl",
         "computation orders. To turn them off")


class Worker:
    def __init__(self, env=None):
        self.proc = subprocess.Popen(
            [sys.executable, WORKER, "--worker"], cwd=ROOT, env=worker_env(env),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._tail, daemon=True).start()
        self.ready = self._read(START_TIMEOUT_S)

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # EOF: the worker is gone

    def _tail(self):
        for line in self.proc.stderr:
            if not any(n in line for n in NOISE):
                self.stderr = (self.stderr + [line])[-40:]

    def _read(self, timeout):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return {"status": "timeout"}
        if line is None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            return {"status": "crash", "returncode": self.proc.returncode}
        return json.loads(line)

    def run(self, spec, timeout):
        try:
            self.proc.stdin.write(json.dumps(spec) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return {"status": "crash", "returncode": self.proc.poll()}
        return self._read(timeout)

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        if self.alive():
            self.proc.kill()  # the worker this pool started, by its own handle
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass


def describe_exit(returncode):
    if returncode is None:
        return "no exit status"
    if returncode < 0:
        import signal
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "?"
        return f"signal {-returncode} ({name})"
    return f"exit status {returncode}"


class Pool:
    """`size` workers, each driven by a thread; run(specs) returns one
    result per spec, in order: the worker's answer, or {"status": "crash" |
    "timeout", "returncode", "stderr"}."""

    def __init__(self, size=None, case_timeout_s=120, env=None, cases_per_worker=5000):
        self.size = size or max(1, os.cpu_count() or 1)
        self.case_timeout_s = case_timeout_s
        self.env = env
        # a worker is replaced after this many cases: what thousands of
        # traced functions leave behind does not pile up in a long run
        self.cases_per_worker = cases_per_worker
        self.restarts = 0
        self.starts = 0

    def run(self, specs, progress=None):
        results = [None] * len(specs)
        todo = queue.Queue()
        for i in range(len(specs)):
            todo.put(i)
        lock = threading.Lock()
        done = [0]
        failures = []

        def drive():
            worker, served = None, 0
            try:
                while True:
                    try:
                        i = todo.get_nowait()
                    except queue.Empty:
                        return
                    if worker is not None and served >= self.cases_per_worker:
                        worker.close()
                        worker = None
                    if worker is None or not worker.alive():
                        worker, served = Worker(self.env), 0
                        with lock:
                            self.starts += 1
                        if not worker.ready.get("ready"):
                            failures.append(f"worker did not start: {worker.ready}\n"
                                            + "".join(worker.stderr))
                            worker.close()
                            worker = None
                            return
                    result = worker.run(specs[i], self.case_timeout_s)
                    served += 1
                    if result.get("status") in ("crash", "timeout"):
                        time.sleep(0.2)  # the stderr pump's last lines
                        result["stderr"] = "".join(worker.stderr[-15:])
                        result["returncode"] = worker.proc.poll() if result.get(
                            "returncode") is None else result["returncode"]
                        worker.close()
                        worker = None
                        with lock:
                            self.restarts += 1
                    results[i] = result
                    with lock:
                        done[0] += 1
                        if progress:
                            progress(done[0], len(specs))
            finally:
                if worker is not None:
                    worker.close()

        threads = [threading.Thread(target=drive, daemon=True) for _ in range(self.size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures and any(r is None for r in results):
            raise RuntimeError("fuzz workers could not start:\n" + "\n".join(failures))
        return results
