"""Benchmark: ours vs TensorFlow's kernel vs TensorFlow under XLA, in one run.

    python -m benchmarks.bench [--quick] [--out DIR] [--only W1,W3,T2]

Every workload is first checked: our result must equal TensorFlow's kernel
(bitwise) before anything is timed. The three are then timed interleaved,
round by round (a burst of 3 calls each, the order rotating), each inside a
tf.function (XLA: jit_compile=True). The table has the median of all calls,
the speedups, and the multiple of the memory floor: the time to move the
workload's bytes at the copy bandwidth measured just before that workload
(a machine's copy bandwidth drifts, on shared VMs especially, and one lucky
copy should not set every workload's floor). It also has the median of our
first call in each burst, which pays for waking a thread pool that went idle.
The T workloads are the training loop: tables in variables touched a few
rows per step (an SGD step on an embedding lookup, in-place adds into a
variable) and a tf.while_loop updating a loop variable row by row. They are
checked by running each implementation once on its own copy of the variable
and comparing the variables.
The P rows are whole programs (benchmarks/programs.py), each
timed in a plain tf.function and under jit_compile=True against the same
program on stock TensorFlow.
Writes bench.json and bench.png to --out.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

from benchmarks import programs  # noqa: E402
from benchmarks.harness import (  # noqa: E402
    check, copy_bandwidth, expect_retracing, first_touch_cost, machine, progress, time_workload)
from benchmarks.report import plot, render  # noqa: E402
from benchmarks.sweep import sweep_main  # noqa: E402
from benchmarks.workloads import (  # noqa: E402
    M, WORKLOADS, bytes_moved, implementations, make_inputs, output_bytes, quick, training_setup)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="16x smaller, fewer rounds")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--only", default="", help="comma-separated workload and program names")
    parser.add_argument("--out", default="build/bench")
    parser.add_argument("--isa", choices=["portable", "avx2", "avx512"],
                        help="the instruction set our loops use (capped at what the CPU has)")
    parser.add_argument("--sweep", action="store_true",
                        help="instead: W1, W3, W5, W7 (or the rows of --only, e.g. S1,S3,S5,S6) from 16 KiB "
                             "to 256 MiB outputs (--quick: to 16 MiB)")
    args = parser.parse_args(argv)
    expect_retracing()
    if args.isa:  # read by the library at its first op
        os.environ["TF_SCATTER_OPS_ISA"] = args.isa
    if args.sweep:
        return sweep_main(args)

    only = [n for n in args.only.split(",") if n]
    workloads = [w for w in WORKLOADS if not only or w.name in only]
    program_names = [p.name for p in programs.PROGRAMS if not only or p.name in only]
    if args.quick:
        workloads = [quick(w) for w in workloads]
    rounds = args.rounds or (5 if args.quick else 15)
    rng = np.random.default_rng(0)
    copy_bytes = 128 * M if args.quick else 512 * M

    info = machine()
    info["first_touch_us"] = first_touch_cost() * 1e6
    program_rounds = 3 if args.quick else 7
    total = sum(min(rounds, w.rounds or rounds) + 1 for w in workloads) + len(program_names) * program_rounds
    done = 0
    results = []
    for w in workloads:
        progress(done, total, f"{w.name}: check")
        if w.kind == "tensor":
            inputs = make_inputs(w, rng)
            impls = implementations(w)
            check(w, impls, inputs)
        else:
            impls, inputs, check_training = training_setup(w, rng)
            check_training()
        done += 1

        def tick(w=w):
            nonlocal done
            done += 1
            progress(done, total, f"{w.name}: timing")

        bandwidth = None if w.eager_tiny else copy_bandwidth(copy_bytes, repeats=3)
        t, t_first = time_workload(w, impls, inputs, min(rounds, w.rounds or rounds), tick)
        nbytes = None if w.eager_tiny else bytes_moved(w, inputs)
        faults = 0.0
        if info["allocator"] == "default" and not w.eager_tiny:
            faults = output_bytes(w, inputs) / 4096 * info["first_touch_us"] * 1e-6
        results.append(dict(name=w.name, title=w.title, ours=t["ours"], tf=t["tf"], xla=t.get("xla"),
                            **{"ours xla": t.get("ours xla")},
                            first=t_first, bandwidth=bandwidth, bytes=nbytes, per_call=w.eager_tiny,
                            floor=nbytes / bandwidth if nbytes else None, faults=faults))
        del inputs, impls

    def program_tick(name):
        nonlocal done
        done += 1
        progress(done, total, f"{name}: timing")

    program_rows = programs.run(program_names, args.quick, program_rounds, program_tick) if program_names else []
    sys.stderr.write("\n")

    table = render(results, info)
    print(table if results else table.split("\n")[0])  # the machine's line
    if program_rows:
        print("\n" + programs.render(program_rows))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(dict(machine=info, quick=args.quick, rounds=rounds, results=results,
                       programs=program_rows), f, indent=1)
    if results:
        plot(results, os.path.join(args.out, "bench.png"))
    print(f"\nwrote {args.out}/bench.json and {args.out}/bench.png")


if __name__ == "__main__":
    main()
