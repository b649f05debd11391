"""The docs cannot drift from the code.

Every code block in README.md, CONTRIBUTING.md and docs/*.md is checked
(below); and, each in its own section of this file: every repository path
that the docs, the folder READMEs and the sources' comments and docstrings
name exists, and every link between the docs reaches a file and a heading
(paths); docs/api.md's device table is what the library registers, and no
doc calls an op with GPU kernels CPU-only (devices); the README is a landing
page that indexes every public name into docs/api.md, and the failures that
tools/tf_kernel_tests.py allows are rows of docs/api.md's differences from
TensorFlow (README).

Code blocks:

Fenced blocks only (an indented code block is an error: fence it), and
every fence needs a language this file knows:

* ```python blocks run, each in a fresh Python process with the repository
  on PYTHONPATH, TF_CPP_MIN_LOG_LEVEL=3 and a temporary working directory.
  A `print(...)` line must state what it prints in a trailing comment,
  `print(x)  # -> [0. 3. 0. 0.]`, and the test compares the two (tokens
  separated by spaces, brackets and commas; `# -> ...text...` means "contains
  text"); every such line must have run. Other results are `assert`s in the
  block itself.
* ```sh blocks are checked, not run (they build, install, or run for an
  hour): `make X` must be a target of Makefile or mk/*.mk, `python -m
  benchmarks.bench ARGS` must parse with the benchmark's own argparse,
  `python -m tf_scatter_ops.export` must have SRC, DST and its own options,
  `python -m benchmarks.export`, `benchmarks.groupwise` and
  `benchmarks.reductions` take only --quick,
  `pip` and `bazel` lines must name files, packages and configs that exist,
  a script must exist and be executable (and its flags appear in it).
  Anything else fails: teach this file the new command.

An HTML comment on the line before a fence gives a block options:

    <!-- test: group=NAME -->      python blocks of one file with the same
                                   group run in order, each in its own
                                   process, in one shared directory (e.g.
                                   save a SavedModel, then load it "in
                                   another process")
    <!-- test: prelude=NAME -->    runs PRELUDES[NAME] first, in the same
                                   process (e.g. an in-process cluster)
    <!-- test: skip=REASON -->     compiled, not run; reported as skipped
                                   (in a group: the whole group)
    <!-- test: timeout=SECONDS --> (default 120)
"""

import collections
import functools
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import textwrap
from glob import glob

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md", "CONTRIBUTING.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob(os.path.join(ROOT, "docs", "*.md")))
LANGUAGES = {"python", "sh"}
OPTION = re.compile(r"^<!--\s*test:(.*)-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)\s*$")
EXPECT = re.compile(r"^(\s*)print\((.*)\)\s*#\s*->\s*(.*?)\s*$")
DEFAULT_TIMEOUT = 120


class Block:
    def __init__(self, doc, line, language, text, options):
        self.doc, self.line, self.language, self.text, self.options = doc, line, language, text, options

    @property
    def where(self):
        return f"{self.doc}:{self.line}"


def parse_options(text):
    options = {}
    for part in text.split(";"):
        part = part.strip()
        if part:
            key, _, value = part.partition("=")
            options[key.strip()] = value.strip().strip('"')
    return options


def read_blocks(doc):
    """(blocks, problems) of one Markdown file; `line` is the first line of
    the block's code (1-based)."""
    with open(os.path.join(ROOT, doc)) as f:
        lines = f.read().split("\n")
    blocks, problems = [], []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if (lines[i][:4] == "    " or lines[i][:1] == "\t") and lines[i].strip() and (
                    i == 0 or not lines[i - 1].strip()):
                problems.append(f"{doc}:{i + 1}: an indented code block; fence it with a language")
            i += 1
            continue
        indent, fence, language = m.groups()
        options = {}
        if i and OPTION.match(lines[i - 1].strip()):
            options = parse_options(OPTION.match(lines[i - 1].strip()).group(1))
        start, j = i + 1, i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence[:3])
                                      and lines[j].strip().strip(fence[0]) == ""):
            j += 1
        if j == len(lines):
            problems.append(f"{doc}:{i + 1}: the fence is never closed")
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line
                         for line in lines[start:j])
        blocks.append(Block(doc, start + 1, language, body, options))
        i = j + 1
    return blocks, problems


ALL_BLOCKS, PROBLEMS = [], []
for _doc in DOCS:
    _blocks, _problems = read_blocks(_doc)
    ALL_BLOCKS += _blocks
    PROBLEMS += _problems


def test_docs_were_found():
    assert "docs/performance.md" in DOCS and "docs/gpu.md" in DOCS
    assert any(b.language == "python" for b in ALL_BLOCKS)


def test_every_block_is_fenced_with_a_known_language():
    problems = list(PROBLEMS)
    for b in ALL_BLOCKS:
        if b.language not in LANGUAGES:
            problems.append(f"{b.where}: fence language {b.language!r} is not one of "
                            f"{sorted(LANGUAGES)}: give the block one, or teach tests/test_docs.py")
        unknown = set(b.options) - {"group", "prelude", "skip", "timeout"}
        if unknown:
            problems.append(f"{b.where}: unknown test options {sorted(unknown)}")
        if b.options.get("prelude") and b.options["prelude"] not in PRELUDES:
            problems.append(f"{b.where}: unknown prelude {b.options['prelude']!r}")
        if b.options and b.language != "python":
            problems.append(f"{b.where}: test options apply to python blocks only")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- python


PRELUDES = {
    # ParameterServerStrategy needs a cluster: 2 workers and 2 parameter
    # servers, started in this process on free ports of 127.0.0.1 (after
    # `import tf_scatter_ops`, as every process of a cluster must), and the
    # TF_CONFIG of its chief, which TFConfigClusterResolver reads. The
    # servers cannot be stopped, so the process ends with os._exit.
    "ps_cluster": textwrap.dedent("""
        import json, os, socket
        import tensorflow as tf
        import tf_scatter_ops

        def _free_ports(n):
            socks = [socket.socket() for _ in range(n)]
            for s in socks:
                s.bind(("127.0.0.1", 0))
            ports = [s.getsockname()[1] for s in socks]
            for s in socks:
                s.close()
            return ports

        _chief, _w0, _w1, _ps0, _ps1 = _free_ports(5)
        _cluster = {"worker": [f"127.0.0.1:{_w0}", f"127.0.0.1:{_w1}"],
                    "ps": [f"127.0.0.1:{_ps0}", f"127.0.0.1:{_ps1}"]}
        _config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=3)
        SERVERS = [tf.distribute.Server(tf.train.ClusterSpec(_cluster), job_name=job, task_index=k,
                                        protocol="grpc", config=_config, start=True)
                   for job, k in (("worker", 0), ("worker", 1), ("ps", 0), ("ps", 1))]
        os.environ["TF_CONFIG"] = json.dumps({
            "cluster": dict(_cluster, chief=[f"127.0.0.1:{_chief}"]),
            "task": {"type": "chief", "index": 0}})
        """),
}
EXIT_HARD = {"ps_cluster"}

# Imported by every block's process: checks `# ->` lines, then runs the block.
RUNNER = textwrap.dedent('''
    import os, re, sys

    _TOKEN = re.compile(r"[\\[\\](){},]|[^\\s\\[\\](){},]+")
    _hits = set()


    def _tokens(text):
        return " ".join(_TOKEN.findall(text))


    def expect(line, expected, *values):
        got = " ".join(str(v) for v in values)
        print(got)
        want = expected.strip()
        if want.startswith("...") and want.endswith("...") and len(want) > 6:
            ok = _tokens(want[3:-3]) in _tokens(got)
        else:
            ok = _tokens(want) == _tokens(got)
        if not ok:
            raise AssertionError(f"line {line} printed {got!r}; the docs say {want!r}")
        _hits.add(line)


    def run(path, expected_lines, prelude, exit_hard):
        scope = {"__name__": "__main__", "__file__": path, "_doc_expect": expect}
        if prelude:
            exec(compile(prelude, "<prelude>", "exec"), scope)
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), scope)
        missing = sorted(set(expected_lines) - _hits)
        if missing:
            raise AssertionError(f"the print(...)  # -> lines {missing} never ran")
        if exit_hard:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
    ''')


def transform(block):
    """The block's code with `print(x)  # -> y` lines turned into checks, and
    blank lines in front so that line numbers are those of the Markdown file;
    and the lines with expectations. A print without one is an error."""
    out, expected, problems = [""] * (block.line - 1), [], []
    for k, line in enumerate(block.text.split("\n")):
        number = block.line + k
        m = EXPECT.match(line)
        if m:
            indent, args, want = m.groups()
            out.append(f"{indent}_doc_expect({number}, {want!r}, {args})")
            expected.append(number)
        else:
            if re.search(r"\bprint\(", line):
                problems.append(f"{block.doc}:{number}: print(...) without '  # -> what it prints'")
            out.append(line)
    return "\n".join(out) + "\n", expected, problems


def python_items():
    """One test per ungrouped python block, one per group."""
    items = {}
    for b in ALL_BLOCKS:
        if b.language != "python":
            continue
        key = (b.doc, b.options["group"]) if "group" in b.options else (b.doc, b.line)
        items.setdefault(key, []).append(b)
    return [pytest.param(blocks, id=f"{blocks[0].doc}:{blocks[0].line}"
                         + (f"[{blocks[0].options['group']}]" if "group" in blocks[0].options else ""))
            for blocks in items.values()]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.pop("TF_CONFIG", None)
    return env


def _run(argv, cwd, timeout, **env):
    """Runs argv in its own process group (env: variables to set); the group
    is killed afterwards, whatever happens. Returns (returncode, output)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=dict(_env(), **env), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out + f"\n[killed after the {timeout} s time limit]"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return proc.returncode, out


@pytest.mark.parametrize("blocks", python_items())
def test_python_block_runs(blocks, tmp_path):
    sources = []
    for b in blocks:
        source, expected, problems = transform(b)
        assert not problems, "\n".join(problems)
        compile(source, b.where, "exec")  # skipped blocks too
        sources.append((b, source, expected))
    reasons = [b.options["skip"] for b in blocks if "skip" in b.options]
    if reasons:
        pytest.skip("; ".join(reasons))
    with open(tmp_path / "_doc_runner.py", "w") as f:
        f.write(RUNNER)
    work = tmp_path / "work"
    work.mkdir()
    for b, source, expected in sources:
        path = tmp_path / f"{b.doc.replace('/', '_').replace('.', '_')}_{b.line}.py"
        path.write_text(source)
        prelude = b.options.get("prelude")
        code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import _doc_runner; "
                f"_doc_runner.run({str(path)!r}, {expected!r}, {PRELUDES.get(prelude, '')!r}, "
                f"{prelude in EXIT_HARD!r})")
        timeout = int(b.options.get("timeout", DEFAULT_TIMEOUT))
        rc, out = _run([sys.executable, "-c", code], cwd=work, timeout=timeout)
        assert rc == 0, f"the python block at {b.where} failed (exit {rc}):\n{out[-5000:]}"


# ---------------------------------------------------------------- sh


def make_targets():
    """Explicit targets of Makefile and mk/*.mk (no make run: a dry run may
    still remake included makefiles)."""
    targets = set()
    for path in [os.path.join(ROOT, "Makefile")] + glob(os.path.join(ROOT, "mk", "*.mk")):
        with open(path) as f:
            for line in f:
                if line[:1] in ("\t", "#", " ") or "=" in line.split(":", 1)[0]:
                    continue
                m = re.match(r"^([^:=#]+?)\s*::?(?!=)(.*)$", line.rstrip("\n"))
                if not m:
                    continue
                names, rest = m.groups()
                if names.strip() == ".PHONY":
                    targets.update(rest.split())
                else:
                    targets.update(n for n in names.split() if "$" not in n and "%" not in n)
    return targets


def requirement_pins():
    pins = {}
    with open(os.path.join(ROOT, "requirements.txt")) as f:
        for line in f:
            m = re.match(r"^\s*([A-Za-z0-9_.\-]+)==(\S+)", line)
            if m:
                pins[m.group(1).lower()] = m.group(2)
    return pins


def shell_commands(block):
    """(line number, argv) of each command: comments, continuations, `&&`
    and `;` handled."""
    commands, pending, first = [], "", None
    for k, line in enumerate(block.text.split("\n")):
        number = block.line + k
        code = re.split(r"(?:^|\s)#", line, maxsplit=1)[0].rstrip()
        if first is None:
            first = number
        if code.endswith("\\"):
            pending += code[:-1] + " "
            continue
        code, pending = pending + code, ""
        for part in re.split(r"&&|;", code):
            argv = shlex.split(part)
            if argv:
                commands.append((first, argv))
        first = None
    return commands


def _is_env_assignment(word):
    return re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word) is not None


def check_command(argv, targets, bench_argvs):
    """Problems with one command line; bench argument lists are collected
    for one parse by the benchmark's parser."""
    while argv and _is_env_assignment(argv[0]):
        argv = argv[1:]
    if not argv:
        return ["an environment assignment alone"]
    prog, args = argv[0], argv[1:]
    problems = []
    if prog == "make":
        for t in [a for a in args if not a.startswith("-") and not _is_env_assignment(a)] or ["all"]:
            if t not in targets:
                problems.append(f"make target {t!r} is not in Makefile or mk/*.mk")
    elif os.path.basename(prog) in ("python", "python3"):
        if args[:2] == ["-m", "benchmarks.bench"]:
            bench_argvs.append(args[2:])
        elif args[:2] == ["-m", "tf_scatter_ops.export"]:
            rest, positional = args[2:], []
            while rest:
                a = rest.pop(0)
                if a == "--inputs" and rest:
                    rest.pop(0)
                elif a.startswith("-") and a not in ("--check", "-h", "--help"):
                    problems.append(f"tf_scatter_ops.export has no option {a!r}")
                elif not a.startswith("-"):
                    positional.append(a)
            if len(positional) != 2 and not {"-h", "--help"} & set(args):
                problems.append("tf_scatter_ops.export takes SRC and DST")
        elif args[:2] in (["-m", "benchmarks.export"], ["-m", "benchmarks.groupwise"],
                          ["-m", "benchmarks.reductions"]):
            if [a for a in args[2:] if a != "--quick"]:
                problems.append(f"{args[1]} takes only --quick")
        elif args[:1] == ["tools/client_suites.py"]:
            suites = _tool_module("client_suites").SUITES
            if args[1:2] not in (["record"], ["check"]):
                problems.append("tools/client_suites.py takes record or check")
            for a in args[2:]:
                if not a.startswith("-") and a not in suites:
                    problems.append(f"tools/client_suites.py has no suite {a!r}")
        elif args[:2] == ["-m", "examples.demo"]:
            if args[2:]:
                problems.append("the demo takes no arguments")
        elif args[:2] == ["-m", "pytest"]:
            rest = args[2:]
            for k, a in enumerate(rest):
                if a.startswith("-") or (k and rest[k - 1] in ("-k", "-m", "-p")):
                    continue
                if not os.path.exists(os.path.join(ROOT, a.split("::")[0])):
                    problems.append(f"pytest path {a!r} does not exist")
        else:
            problems.append(f"unknown python command {argv}")
        if "/" in prog and not prog.startswith(".venv/"):
            problems.append(f"interpreter {prog!r}: use python or .venv/bin/python")
    elif prog == "pip":
        if not args or args[0] not in ("install", "wheel"):
            return [f"unknown pip command {argv}"]
        pins = requirement_pins()
        for a in args[1:]:
            if a == ".":
                for f in ("setup.py", "pyproject.toml"):
                    if not os.path.exists(os.path.join(ROOT, f)):
                        problems.append(f"pip {args[0]} . needs {f}")
            elif "==" in a:
                name, version = a.split("==", 1)
                if pins.get(name.lower()) != version:
                    problems.append(f"{a}: requirements.txt pins {name}=={pins.get(name.lower())}")
            elif a.startswith("-") or a.endswith("/"):
                continue
            else:
                problems.append(f"unknown pip argument {a!r}")
    elif prog == "bazel":
        if not args or args[0] not in ("build", "test"):
            return [f"unknown bazel command {argv}"]
        with open(os.path.join(ROOT, ".bazelrc")) as f:
            bazelrc = f.read()
        for a in args[1:]:
            if a.startswith("--config="):
                if not re.search(rf"^\w+:{re.escape(a.split('=', 1)[1])}\s", bazelrc, re.M):
                    problems.append(f"{a}: no such config in .bazelrc")
            elif a.startswith("//"):
                package = a[2:].split(":")[0].rstrip("/.")
                if not os.path.exists(os.path.join(ROOT, package, "BUILD")):
                    problems.append(f"{a}: no BUILD file in {package or 'the root'}")
            elif not a.startswith("--"):
                problems.append(f"unknown bazel argument {a!r}")
    elif "/" in prog:
        path = os.path.join(ROOT, prog)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            problems.append(f"{prog} is not an executable file")
        else:
            with open(path, errors="replace") as f:
                script = f.read()
            for a in args:
                if a.startswith("-") and a not in script:
                    problems.append(f"{prog} does not mention the flag {a}")
    else:
        problems.append(f"unknown command {prog!r}: teach tests/test_docs.py to check it")
    return problems


SH_BLOCKS = [b for b in ALL_BLOCKS if b.language == "sh"]


def test_shell_blocks_name_real_targets_files_and_flags():
    targets = make_targets()
    assert {"demo", "test", "bench"} <= targets, sorted(targets)
    problems, bench = [], []
    for b in SH_BLOCKS:
        for number, argv in shell_commands(b):
            found = []
            problems += [f"{b.doc}:{number}: {p}" for p in check_command(argv, targets, found)]
            bench += [(f"{b.doc}:{number}", a) for a in found]
    assert not problems, "\n".join(problems)
    if bench:
        check_bench_arguments(bench)


def check_bench_arguments(bench):
    """Every `python -m benchmarks.bench ARGS` parses with bench.main's own
    argparse (stopped right after parsing)."""
    code = textwrap.dedent("""
        import argparse, json, sys
        from benchmarks import bench

        class Parsed(Exception):
            pass

        parse_args = argparse.ArgumentParser.parse_args

        def parse_and_stop(self, args=None, namespace=None):
            parse_args(self, args, namespace)
            raise Parsed

        argparse.ArgumentParser.parse_args = parse_and_stop
        bad = []
        for where, argv in json.loads(sys.argv[1]):
            try:
                bench.main(argv)
                bad.append(f"{where}: {argv}: main() returned without parsing")
            except Parsed:
                pass
            except SystemExit as e:
                bad.append(f"{where}: {argv}: argparse exit {e.code}")
        print(json.dumps(bad))
        """)
    with tempfile.TemporaryDirectory() as cwd:
        rc, out = _run([sys.executable, "-c", code, json.dumps(bench)], cwd=cwd, timeout=120)
    assert rc == 0, out[-3000:]
    bad = json.loads(out.strip().splitlines()[-1])
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------- paths
#
# What names a path of the repository, in the docs, the folder READMEs and
# the comments and docstrings of the sources (a token: a run of characters
# between spaces, backquotes, quotes, brackets and `|:;`, a trailing `.,`
# dropped, a `#anchor` cut off):
#
#   root      it starts with a top-level folder (`cc/`, `tests/`, ...): it
#             must exist from the repository's root
#   relative  in Markdown and C++ only, it starts with a folder of cc/,
#             cc/kernels/ or tests/cc/ (`cpu/thresholds.h`, `ops/op_table.h`):
#             it must exist from the file's folder, the root, cc/ or
#             cc/kernels/
#   bare      a file name with no folder and a source extension
#             (`scatter_ops.cc`): some file of the repository has that name,
#             or EXTERNAL_FILES lists it
#
# `{a,b}` is expanded and `*` or `<name>` is a wildcard: a pattern must match
# at least one file. `folder/module.attr` names the module folder/module.py.
# Markdown links ([text](path#anchor)) must reach a file, and an anchor one of
# its headings.

ROOT_FOLDERS = ("cc", "tf_scatter_ops", "tests", "tools", "docs", "mk", "benchmarks", "examples",
                "third_party", ".ci")
# Files of other projects (TensorFlow, XLA, Keras) that comments name.
EXTERNAL_FILES = {"segment_reduction_ops_test.py", "embedding_ops_test.py", "core_test.py",
                  "numpy_test.py", "math_test.py", "nn_test.py", "custom_call_status.h", "tensor.h"}
SOURCE_EXTENSIONS = (".h", ".cc", ".cu", ".cuh", ".py", ".mk", ".md", ".sh")
CPP = (".h", ".cc", ".cu", ".cuh")
NOT_SCANNED = {".git", ".venv", "build", "dist", "third_party", "__pycache__", ".pytest_cache",
               ".hypothesis"}
SEARCH_BASES = ("", "cc", "cc/kernels")


def _tool_module(name):
    """tools/<name>.py, imported from its path."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"_tool_{name}", os.path.join(ROOT, "tools", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def repository_files():
    """Every file of the working tree but the build's and the environment's."""
    files = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in NOT_SCANNED and not d.startswith("bazel-"))
        files += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names]
    return sorted(files)


FILES = repository_files()
BASENAMES = {os.path.basename(f) for f in FILES}
SUBFOLDERS = sorted({d for base in ("cc", "cc/kernels", "tests/cc")
                     for d in os.listdir(os.path.join(ROOT, base))
                     if os.path.isdir(os.path.join(ROOT, base, d))})


def path_sources():
    """(Markdown files, source files) whose paths are checked."""
    markdown = DOCS + [f for f in FILES if os.path.basename(f) == "README.md" and f not in DOCS]
    sources = [f for f in FILES
               if (f.startswith(("cc/", "tests/cc/")) and f.endswith(CPP))
               or (f.startswith(("tf_scatter_ops/", "tests/", "benchmarks/", "examples/"))
                   and f.endswith(".py"))
               or (f.startswith("benchmarks/") and f.endswith(".cc"))
               or (f.startswith(("tools/", "mk/", ".ci/")) and not f.endswith(".md"))
               or f == "Makefile"]
    return markdown, sources


def cpp_comments(text):
    """(first line, text) of each comment of C++ or CUDA source."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            line += text.count("\n", i, j)
            i = j + 2
        elif text[i] == '"' and i and text[i - 1] == "R" and "(" in text[i:i + 20]:
            k = text.index("(", i)  # a raw string R"delim(...)delim"
            end = text.find(")" + text[i + 1:k] + '"', k)
            j = n if end < 0 else end + k - i + 1
            line += text.count("\n", i, j)
            i = j
        elif text[i] in "\"'":
            j = i + 1
            while j < n and text[j] not in (text[i], "\n"):
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            line += text[i] == "\n"
            i += 1
    return out


def python_comments(text):
    """(first line, text) of each comment and docstring of Python source."""
    import ast
    import io
    import tokenize
    out = [(tok.start[0], tok.string[1:])
           for tok in tokenize.generate_tokens(io.StringIO(text).readline)
           if tok.type == tokenize.COMMENT]
    lines = text.split("\n")
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            out.append((body[0].lineno, "\n".join(lines[body[0].lineno - 1:body[0].end_lineno])))
    return out


def hash_comments(text):
    """(line, text) of each `#` comment of a shell script or makefile."""
    return [(k, m.group(1)) for k, line in enumerate(text.split("\n"), 1)
            if not line.startswith("#!") and (m := re.search(r"(?:^|\s)#(.*)$", line))]


def commented_text(path):
    with open(os.path.join(ROOT, path), errors="replace") as f:
        text = f.read()
    if path.endswith(".md"):
        return [(1, text)]
    if path.endswith(CPP):
        return cpp_comments(text)
    if path.endswith(".py") or text.startswith("#!/usr/bin/env python"):
        return python_comments(text)
    return hash_comments(text)


def _expand(path):
    """Brace alternatives ({a,b}) of a path."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [q for alt in m.group(1).split(",")
            for q in _expand(path[:m.start()] + alt + path[m.end():])]


def path_exists(path, bases):
    """Whether the path, or each of its brace alternatives, names a file or
    folder from one of the bases (a pattern: matches one)."""
    for p in _expand(path):
        pattern = re.sub(r"<[^<>/]*>", "*", p)
        candidates = [pattern]
        stem, dot, attr = pattern.rpartition(".")
        if dot and "/" not in attr and re.fullmatch(r"[A-Za-z_]\w*", attr) \
                and "." + attr not in SOURCE_EXTENSIONS:
            candidates.append(stem + ".py")  # module.attr
        if not any(glob(os.path.join(ROOT, b, c)) for b in bases for c in candidates):
            return False
    return True


TOKEN = re.compile(r"[^\s`'\"()\[\]|:;]+")


def named_paths(text, markdown_or_cpp):
    """(offset, kind, path) of each token of the text that names a path."""
    for m in TOKEN.finditer(text):
        token = m.group(0).split("#", 1)[0].rstrip(".,")
        if token.startswith("./"):
            token = token[2:]
        head = token.split("/", 1)[0]
        if "/" in token and head in ROOT_FOLDERS:
            yield m.start(), "root", token
        elif "/" in token and head in SUBFOLDERS and markdown_or_cpp:
            yield m.start(), "relative", token
        elif ("/" not in token and token.endswith(SOURCE_EXTENSIONS) and token[:1].isalnum()
              and not re.search(r"[<*{]", token)):
            yield m.start(), "bare", token


def path_problems(path):
    """'file:line: ...' for each named path of one file that does not exist."""
    problems = []
    is_md = path.endswith(".md")
    text_chunks = commented_text(path)
    folder = os.path.dirname(path)
    for first, text in text_chunks:
        for offset, kind, name in named_paths(text, is_md or path.endswith(CPP)):
            if kind == "root":
                ok = path_exists(name, [""])
            elif kind == "relative":
                ok = path_exists(name, (folder,) + SEARCH_BASES)
            else:
                ok = name in BASENAMES or name in EXTERNAL_FILES
            if not ok:
                line = first + text.count("\n", 0, offset)
                problems.append(f"{path}:{line}: {name} ({kind} name) does not exist")
    return problems


def test_paths_named_in_the_docs_and_comments_exist():
    """Every repository path that a doc, a folder README or a source comment
    names exists (see the rules above); all failures at once."""
    markdown, sources = path_sources()
    assert "cc/ops/README.md" in markdown and "cc/ops/op_table.h" in sources
    problems = [p for f in markdown + sources for p in path_problems(f)]
    assert not problems, (f"{len(problems)} named paths do not exist:\n" + "\n".join(problems))


def without_code(text, inline=True):
    """Markdown with its fenced blocks (and its inline code) blanked, lines
    kept."""
    text = re.sub(r"^\s*(```|~~~).*?^\s*\1\s*$", lambda m: "\n" * m.group(0).count("\n"), text,
                  flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group(0)), text) if inline else text


def anchors(path):
    """GitHub's anchors of a Markdown file's headings (and <a id=...>)."""
    with open(os.path.join(ROOT, path)) as f:
        text = without_code(f.read())
    found, seen = set(), collections.Counter()
    with open(os.path.join(ROOT, path)) as f:
        raw = f.read().split("\n")
    for k, line in enumerate(text.split("\n")):
        if re.match(r"^#{1,6}\s", line):
            title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", raw[k].lstrip("#").strip())
            slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
            found.add(slug + (f"-{seen[slug]}" if seen[slug] else ""))
            seen[slug] += 1
    found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return found


def test_links_between_the_docs_reach_a_file_and_a_heading():
    """Every relative Markdown link of the docs and the folder READMEs
    reaches a file, and its #anchor a heading there."""
    markdown, _ = path_sources()
    problems = []
    for doc in markdown:
        with open(os.path.join(ROOT, doc)) as f:
            text = without_code(f.read())
        for m in re.finditer(r"\]\(([^()\s]+)\)", text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            where = f"{doc}:{text.count(chr(10), 0, m.start()) + 1}"
            file, _, anchor = target.partition("#")
            file = os.path.normpath(os.path.join(os.path.dirname(doc), file)) if file else doc
            if not os.path.exists(os.path.join(ROOT, file)):
                problems.append(f"{where}: the link {target} reaches no file ({file})")
            elif anchor and file.endswith(".md") and anchor not in anchors(file):
                problems.append(f"{where}: the link {target}: {file} has no heading #{anchor}")
    assert not problems, f"{len(problems)} broken links:\n" + "\n".join(problems)


# ---------------------------------------------------------------- devices
#
# docs/api.md's device table against the kernels the library registers, read
# in a process of its own with TF_SCATTER_OPS_GPU=1, which registers the GPU
# kernels of a library built with them even where no GPU or driver is (the
# registry is only read). A library built without GPU kernels (no nvcc, or
# TFSO_GPU=0) or without XLA kernels cannot say what a build with them has:
# the GPU or XLA column is then skipped, with the reason.

API = "docs/api.md"
DEVICE_COLUMNS = ["op (`TfScatter>`)", "function", "value dtypes", "CPU", "GPU", "XLA"]
_FLOATS = ["bfloat16", "float16", "float32", "float64"]
_REALS = _FLOATS + ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
_NUMBERS = _REALS + ["complex64", "complex128"]
DTYPE_GROUPS = {  # the names of docs/api.md's dtype table
    "all": frozenset(_NUMBERS + ["bool", "string"]),
    "numbers": frozenset(_NUMBERS),
    "real numbers": frozenset(_REALS),
    "floats": frozenset(_FLOATS),
}

REGISTRY = textwrap.dedent("""
    import json
    import tensorflow as tf
    from tensorflow.python.framework import kernels
    import tf_scatter_ops as tso
    from tf_scatter_ops._base import table as _table
    found = {}
    for k in kernels.get_all_registered_kernels().kernel:
        if k.op.startswith("TfScatter>"):
            dtypes = found.setdefault(k.op[len("TfScatter>"):], {}).setdefault(k.device_type, [])
            dtypes += [tf.as_dtype(t).name for c in k.constraint for t in c.allowed_values.list.type]
    print(json.dumps({"built_with_gpu": tso.built_with_gpu(), "built_with_xla": tso.built_with_xla(),
                      "gpu_status": tso.gpu_status(), "kernels": found,
                      "rows": [[row.op, row.py] for row in _table.OPS]}))
    """)


@functools.lru_cache(maxsize=None)
def registry():
    """{"built_with_gpu", "built_with_xla", "gpu_status", "kernels": {op:
    {device type: [dtypes]}}, "rows": [[op, py], ...]} of the library."""
    with tempfile.TemporaryDirectory() as cwd:
        rc, out = _run([sys.executable, "-c", REGISTRY], cwd=cwd, timeout=120, TF_SCATTER_OPS_GPU="1")
    assert rc == 0, out[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def section(doc, heading):
    """The text of a `## heading` section of a Markdown file (up to the next
    `## `), and the line its heading is on."""
    with open(os.path.join(ROOT, doc)) as f:
        text = f.read()
    start = text.find(f"\n{heading}\n")
    assert start >= 0, f"{doc} has no {heading!r} section"
    body = text[start + 1:].split("\n## ", 1)[0]
    return body, text.count("\n", 0, start) + 2


def device_table():
    """{op: (line, {column: cell})} of docs/api.md's device table."""
    body, first = section(API, "## Devices")
    rows, header = {}, None
    for k, line in enumerate(body.split("\n")):
        if not line.startswith("|"):
            if header:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            assert header == DEVICE_COLUMNS, (f"{API}:{first + k}: the device table's columns are "
                                              f"{header}, not {DEVICE_COLUMNS}")
        elif not set("".join(cells)) <= set("-: "):
            rows[cells[0].strip("`")] = (first + k, dict(zip(header, cells)))
    assert rows, f"{API}: the Devices section has no table"
    return rows


def _group(dtypes):
    """docs/api.md's name for a set of dtypes, or the set."""
    names = [name for name, group in DTYPE_GROUPS.items() if group == frozenset(dtypes)]
    return names[0] if names else ", ".join(sorted(dtypes)) or "none"


def _devices(op):
    return registry()["kernels"].get(op, {})


def test_the_device_table_lists_every_op_with_its_cpu_kernels():
    """Every op with a kernel, and every op-table row, has a row: its
    function, its value dtypes (the CPU kernels') and its CPU column."""
    table, reg = device_table(), registry()
    problems = []
    for op in sorted(set(reg["kernels"]) - set(table)):
        problems.append(f"{API}: the device table has no row for TfScatter>{op}, which has kernels "
                        f"on {sorted(reg['kernels'][op])}")
    for op in sorted(set(table) - set(reg["kernels"])):
        problems.append(f"{API}:{table[op][0]}: TfScatter>{op} has no kernel")
    for op, py in reg["rows"]:
        if op not in table:
            problems.append(f"{API}: the device table has no row for op-table row {op} ({py})")
        elif f"`{py}`" not in table[op][1]["function"]:
            problems.append(f"{API}:{table[op][0]}: the function of {op} is `{py}`")
    for op, (line, cells) in sorted(table.items()):
        cpu = _devices(op).get("CPU", [])
        if cells["CPU"] != ("yes" if cpu else "no"):
            problems.append(f"{API}:{line}: {op}: CPU says {cells['CPU']!r}, the registry "
                            f"{'has' if cpu else 'has no'} CPU kernels")
        if cpu and cells["value dtypes"] != _group(cpu):
            problems.append(f"{API}:{line}: {op}: value dtypes {cells['value dtypes']!r}, the CPU "
                            f"kernels take {_group(cpu)!r}")
    assert not problems, "\n".join(problems)


def _skip_unless_built_with(what):
    reg = registry()
    if what == "gpu" and not reg["built_with_gpu"]:
        pytest.skip("the library was built without GPU kernels (built_with_gpu() is False: no "
                    f"nvcc, or TFSO_GPU=0), so the GPU column of {API} cannot be checked here")
    if what == "xla" and not reg["built_with_xla"]:
        pytest.skip("the library was built without XLA kernels (built_with_xla() is False), so the "
                    f"XLA column of {API} cannot be checked here")
    return reg


def gpu_answer(op):
    """What the GPU column must say of an op: "yes" for GPU kernels of every
    CPU dtype but string, "no" for none, else the registry's dtypes."""
    devices = _devices(op)
    gpu, cpu = set(devices.get("GPU", [])), set(devices.get("CPU", [])) - {"string"}
    if not gpu:
        return "no"
    return "yes" if gpu == cpu else f"GPU dtypes {sorted(gpu)}, CPU's but string {sorted(cpu)}"


def test_the_device_table_gpu_column():
    reg = _skip_unless_built_with("gpu")
    assert reg["gpu_status"]["registered"], ("TF_SCATTER_OPS_GPU=1 registered no GPU kernel: "
                                             f"{reg['gpu_status']['why']}")
    problems = [f"{API}:{line}: {op}: GPU says {cells['GPU']!r}, the registry: {gpu_answer(op)}"
                for op, (line, cells) in sorted(device_table().items())
                if cells["GPU"] != gpu_answer(op)]
    assert not problems, "\n".join(problems)


def test_the_device_table_xla_column():
    """XLA: the plugin's XLA kernels, for the CPU only (docs/xla.md)."""
    reg = _skip_unless_built_with("xla")
    problems = [f"{API}: TfScatter>{op} has an XLA kernel for {device}: the docs say the XLA "
                "kernels are for the CPU" for op, devices in sorted(reg["kernels"].items())
                for device in devices if device.startswith("XLA_") and device != "XLA_CPU_JIT"]
    for op, (line, cells) in sorted(device_table().items()):
        has = "XLA_CPU_JIT" in _devices(op)
        if cells["XLA"] != ("yes" if has else "no"):
            problems.append(f"{API}:{line}: {op}: XLA says {cells['XLA']!r}, the registry "
                            f"{'has' if has else 'has no'} XLA_CPU_JIT kernel")
    assert not problems, "\n".join(problems)


# A sentence that says something has no GPU kernel ...
NO_GPU = re.compile(r"\bCPU[- ]only\b|\bonly (?:on|for) (?:the |a )?CPUs?\b|\bno GPU kernels?\b"
                    r"|\bwithout (?:a |its |their )?GPU kernels?\b|\bnot on (?:the |a )?GPUs?\b",
                    re.I)
# ... and the ops it names: op types, function names, families.
FAMILIES = {
    r"\bsegment": lambda op: "Segment" in op,
    r"\bscatter": lambda op: "Scatter" in op,
    r"\bgather": lambda op: "Gather" in op,
    r"\bgroup-wise": lambda op: op.startswith(("SegmentSoftmax", "SegmentLog", "SegmentVar",
                                               "SegmentStd")),
    r"\barg(?:max|min|\b)": lambda op: "Arg" in op,
    r"\bvariables?\b": lambda op: op.startswith(("Resource", "ScatterNd")),
}


def device_claims(doc):
    """(line, sentence, ops) of each sentence of a doc that says ops have no
    GPU kernel (sentences about strings aside: they have none)."""
    with open(os.path.join(ROOT, doc)) as f:
        text = without_code(f.read(), inline=False).replace("`", "")
    ops = [op for op, _ in registry()["rows"]] + list(registry()["kernels"])
    py = {p: op for op, p in registry()["rows"]}
    out = []
    for m in re.finditer(r"[^.!?\n|]+(?:\n(?![\n|#-])[^.!?\n|]+)*[.!?]?", text):
        sentence = m.group(0)
        if not NO_GPU.search(sentence) or re.search(r"\bstrings?\b", sentence, re.I):
            continue
        named = {op for op in ops if re.search(rf"\b{op}\b", sentence)}
        named |= {py[p] for p in py if re.search(rf"\b{p}\b", sentence)}
        for word, member in FAMILIES.items():
            if re.search(word, sentence, re.I):
                named |= {op for op in ops if member(op)}
        if named:
            out.append((text.count("\n", 0, m.start()) + 1, " ".join(sentence.split()), named))
    return out


def test_no_doc_says_an_op_with_gpu_kernels_has_none():
    """No doc or folder README says that ops the library has GPU kernels for
    are CPU-only (or have no GPU kernel)."""
    _skip_unless_built_with("gpu")
    markdown, _ = path_sources()
    problems = []
    for doc in markdown:
        for line, sentence, ops in device_claims(doc):
            wrong = sorted(op for op in ops if _devices(op).get("GPU"))
            if wrong:
                problems.append(f"{doc}:{line}: {sentence!r}: GPU kernels are registered for "
                                f"{', '.join(wrong[:6])}{' ...' if len(wrong) > 6 else ''}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- README

README_BYTES = 12 * 1024
LINE_CHARS = 300
NOT_INDEXED = {"ScatterAccumulate", "load"}  # leaving the public API


def test_the_readme_is_a_landing_page():
    """At most 12 KB, no line (README.md, docs/api.md) a paragraph, and a link
    to every page of docs/."""
    problems = []
    size = os.path.getsize(os.path.join(ROOT, "README.md"))
    if size > README_BYTES:
        problems.append(f"README.md has {size} bytes, more than {README_BYTES}: move the detail "
                        "to docs/")
    for doc in ("README.md", API):
        with open(os.path.join(ROOT, doc)) as f:
            for k, line in enumerate(f, 1):
                if len(line.rstrip("\n")) > LINE_CHARS:
                    problems.append(f"{doc}:{k}: {len(line.rstrip())} characters, more than "
                                    f"{LINE_CHARS}: shorten the table cell, put the rest under it")
    with open(os.path.join(ROOT, "README.md")) as f:
        linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)(?:#[\w-]*)?\)", f.read()))
    problems += [f"README.md does not link {doc}" for doc in DOCS
                 if doc.startswith("docs/") and doc not in linked]
    assert not problems, "\n".join(problems)


def _public(obj, name):
    """The public names under a module of the package: its __all__, or its
    functions and classes defined in the package."""
    import inspect
    if not inspect.ismodule(obj):
        return [name]
    names = getattr(obj, "__all__", None) or [
        n for n in dir(obj) if not n.startswith("_") and not inspect.ismodule(getattr(obj, n))
        and getattr(getattr(obj, n), "__module__", "").startswith("tf_scatter_ops")]
    return [q for n in names for q in _public(getattr(obj, n), f"{name}.{n}")]


def public_names():
    """(The public names, the optional modules absent here: `keras` is None
    without Keras, and its names cannot be listed.)"""
    import tf_scatter_ops as tso
    absent = {name for name in tso.__all__ if getattr(tso, name) is None}
    return sorted(q for name in tso.__all__ if name not in NOT_INDEXED | absent
                  for q in _public(getattr(tso, name), name)), absent


def test_the_readme_indexes_every_public_name_and_api_md_documents_it():
    """The README's API section links every public name (tf_scatter_ops's
    __all__, its modules' names) into docs/api.md, names nothing else, and
    docs/api.md names each."""
    import tf_scatter_ops as tso
    body, _ = section("README.md", "## API")
    indexed = dict(re.findall(r"\[`([\w.]+)`\]\((docs/api\.md#[\w-]+)\)", body))
    with open(os.path.join(ROOT, API)) as f:
        api = f.read()
    public, absent = public_names()
    assert len(public) > 40, public
    indexed = {name: link for name, link in indexed.items() if name.split(".")[0] not in absent}
    problems = [f"README.md's API index does not link {name} into {API}"
                for name in public if name not in indexed]
    for name in sorted(set(indexed) - set(public)):
        obj = tso
        for part in name.split("."):
            obj = getattr(obj, part, None)
        problems.append(f"README.md's API index links {name}, "
                        + ("which tf_scatter_ops does not have" if obj is None else
                           "which is not public (tf_scatter_ops.__all__)"))
    problems += [f"{API} does not name {name}" for name in public
                 if not re.search(rf"`[\w.]*\b{re.escape(name.rsplit('.', 1)[-1])}\b", api)]
    assert not problems, "\n".join(problems)


def test_the_kernel_test_allow_list_names_rows_of_the_differences():
    """tools/tf_kernel_tests.py allows a failure of TensorFlow's own tests
    only for a row of docs/api.md's differences from TensorFlow."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "tf_kernel_tests", os.path.join(ROOT, "tools", "tf_kernel_tests.py"))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert len(tool.difference_rows()) > 20
    tool.check_allow_list()  # sys.exit with the reasons that name no row
