#!/usr/bin/env python3
"""The lock files of the Python environments that examples/install_python.sh makes
(examples/python-locks/ENV.lock for ENV base, spark-3.5 and spark-4): checking an environment
against its lock, and making the locks.

  python_lock.py check VENV LOCK
      Exit 0 when VENV's own site-packages hold exactly LOCK's packages at LOCK's versions, `pip
      check` finds nothing broken (a Spark environment sees base's packages too), and the
      environment's imports work with FutureWarning an error. Otherwise exit 1 with one line on
      stderr that names the first package at fault and both versions (and how many others
      differ).

  python_lock.py install VENV LOCK [--base SITE]
      Makes VENV anew with exactly LOCK's packages (pip install --no-deps --require-hashes), seeing
      SITE's packages through a .pth file when given, then checks it as above.

  python_lock.py lock [ENV ...]
      For maintainers, with PyPI: resolves ENV.in (default: every ENV) in scratch environments
      (a Spark one on top of base's, as install_python.sh layers them), checks them as above, and
      writes ENV.lock: every package of the environment as `name==version` with the sha256 of
      each of that version's files that CPython 3.11 on Linux x86_64 can install (wheels and
      the sdist), from the index's JSON API (PEP 691). install_python.sh installs a lock with
      `pip install --no-deps --require-hashes`, so nothing is resolved on a user's machine.

Standard library only; runs with /usr/bin/python3.
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
LOCKS = os.path.join(HERE, "python-locks")
ENVS = ("base", "spark-3.5", "spark-4")
# The interpreter of every environment (as in install_python.sh): Debian's, whichever Python
# runs this script.
PYTHON = "/usr/bin/python3"
# Installed first and on their own: pyspark (and SparkTorch 0.2.0) come as sdists, built with
# --no-build-isolation by these pinned versions instead of whatever PyPI serves at the time.
BUILD_TOOLS = ("pip", "setuptools", "wheel")
# What must import cleanly in each kind of environment, with FutureWarning an error (PySpark
# warns on pandas 3 and refuses a pyarrow built for another numpy).
SMOKE = {
    "base": "import torch, numpy, pandas, pyarrow, pyarrow.parquet, duckdb",
    "spark": ("import pyspark.sql.connect.session, sparktorch\n"
              "from pyspark.sql.pandas.utils import require_minimum_pandas_version, "
              "require_minimum_pyarrow_version\n"
              "require_minimum_pandas_version(); require_minimum_pyarrow_version()"),
}


def normalize(name):
    """PEP 503's form of a project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path):
    """{normalized name: (name, version)} of a lock file; raises ValueError on a line that is
    not `name==version [--hash=...]`."""
    pins = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)(\s+--hash=sha256:[0-9a-f]{64})+$",
                         line)
            if not m:
                raise ValueError("%s:%d: expected name==version --hash=sha256:..." % (path, number))
            pins[normalize(m.group(1))] = (m.group(1), m.group(2))
    return pins


def site_packages(venv):
    """VENV's own site-packages folder, or None."""
    found = sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages")))
    return found[0] if found else None


def installed(site):
    """{normalized name: (name, version)} of the distributions in one site-packages folder
    (not those a .pth file adds)."""
    import importlib.metadata  # pylint: disable=import-outside-toplevel
    dists = {}
    for dist in importlib.metadata.distributions(path=[site]):
        name = dist.metadata["Name"]
        if name:
            dists[normalize(name)] = (name, dist.version)
    return dists


def differences(have, want):
    """One phrase per package whose version differs, sorted by name."""
    out = []
    for key in sorted(set(have) | set(want)):
        if key not in want:
            out.append("%s %s is installed, the lock has no %s" % (have[key] + (have[key][0],)))
        elif key not in have:
            out.append("%s is not installed, the lock says %s" % want[key])
        elif have[key][1] != want[key][1]:
            out.append("%s %s is installed, the lock says %s" % (want[key][0], have[key][1],
                                                                 want[key][1]))
    return out


def smoke_test(lock):
    """The imports that must work in the environment of LOCK (none for a lock of another name)."""
    name = os.path.basename(lock)
    kind = "spark" if name.startswith("spark-") else os.path.splitext(name)[0]
    return SMOKE.get(kind)


def problems(venv, lock):
    """What is wrong with VENV against LOCK, first the worst: a list of phrases."""
    python = os.path.join(venv, "bin", "python")
    site = site_packages(venv)
    if not os.access(python, os.X_OK) or site is None:
        return ["no Python environment there"]
    diff = differences(installed(site), read_lock(lock))
    if diff:
        return diff
    check = subprocess.run([python, "-m", "pip", "check"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, check=False,
                           env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    if check.returncode != 0:
        return ["pip check: " + line for line in check.stdout.splitlines() if line.strip()]
    imports = smoke_test(lock)
    smoke = subprocess.run([python, "-W", "error::FutureWarning", "-c", imports or "pass"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           check=False)
    if smoke.returncode != 0:
        last = [line for line in smoke.stdout.splitlines() if line.strip()][-1:] or ["?"]
        return ["its imports fail: " + last[0]]
    return []


def check_command(args):
    found = problems(args.venv, args.lock)
    if not found:
        return 0
    more = " (and %d more)" % (len(found) - 1) if len(found) > 1 else ""
    print("%s does not match %s: %s%s" % (args.venv, os.path.relpath(args.lock), found[0], more),
          file=sys.stderr)
    return 1


# ---- making the locks (maintainers) ----

def run(argv, **kw):
    print("python_lock: " + " ".join(argv), file=sys.stderr)
    subprocess.run(argv, check=True, **kw)


def wheel_fits(filename):
    """Whether a wheel installs on CPython 3.11, Linux x86_64 (glibc)."""
    parts = filename[:-len(".whl")].split("-")
    if len(parts) < 5:
        return False
    pythons, abis, platforms = parts[-3].split("."), parts[-2].split("."), parts[-1].split(".")
    python_ok = any(p in ("py3", "py311", "cp311") for p in pythons) or (
        "abi3" in abis and any(re.fullmatch(r"cp3(\d+)", p) and int(p[3:]) <= 11
                               for p in pythons))
    platform_ok = any(p == "any" or (p.endswith("_x86_64") and ("manylinux" in p or
                                                                 p.startswith("linux")))
                      for p in platforms)
    return python_ok and platform_ok


def file_version(filename):
    """(normalized name, version) of a wheel's or an sdist's file name, or None."""
    if filename.endswith(".whl"):
        parts = filename[:-len(".whl")].split("-")
        return (normalize(parts[0]), parts[1]) if len(parts) >= 5 else None
    m = re.match(r"^(.+)-([^-]+)\.(tar\.gz|zip)$", filename)
    return (normalize(m.group(1)), m.group(2)) if m else None


def file_hashes(name, version, index):
    """sha256 of every file of NAME VERSION that fits (wheel_fits, or the sdist)."""
    request = urllib.request.Request("%s/%s/" % (index.rstrip("/"), normalize(name)),
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        files = json.load(response)["files"]
    hashes = sorted(f["hashes"]["sha256"] for f in files
                    if file_version(f["filename"]) == (normalize(name), version)
                    and "sha256" in f.get("hashes", {})
                    and (not f["filename"].endswith(".whl") or wheel_fits(f["filename"])))
    if not hashes:
        raise SystemExit("python_lock: no file of %s %s on %s fits CPython 3.11, Linux x86_64"
                         % (name, version, index))
    return hashes


def make_venv(venv, base):
    """A new venv of PYTHON at VENV that sees BASE's packages (a site-packages folder, or None)
    through a .pth file, after its own."""
    run([PYTHON, "-m", "venv", venv])
    if base:
        with open(os.path.join(site_packages(venv), "sparktorch-base.pth"), "w") as f:
            f.write(base + "\n")


def install(venv, lock, base=None):
    """Makes VENV anew with exactly LOCK's packages: pip, setuptools and wheel first (the tools
    that build an sdist, with --no-build-isolation), then the rest, all with --no-deps
    --require-hashes, so pip resolves nothing and installs only files the lock names. BASE: a
    site-packages folder that VENV sees through a .pth file, written before the install."""
    shutil.rmtree(venv, ignore_errors=True)
    make_venv(venv, base)
    pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
           "--disable-pip-version-check", "--no-deps", "--require-hashes", "--no-build-isolation"]
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as tools:
        with open(lock) as f:
            tools.write("".join(line for line in f
                                if normalize(line.split("==", 1)[0]) in BUILD_TOOLS))
        tools.flush()
        run(pip + ["-r", tools.name])
    run(pip + ["-r", lock])


def install_command(args):
    install(args.venv, args.lock, args.base)
    return check_command(args)


def write_lock(env, pins, index):
    path = os.path.join(LOCKS, env + ".lock")
    lines = [
        "# %s: the %s environment of examples/install_python.sh, exactly: every package"
        % (os.path.relpath(path, os.path.dirname(HERE)), env),
        "# installed with `pip install --no-deps --require-hashes` (pip, setuptools and wheel "
        "first).",
        "# Made by `examples/python_lock.py lock` on %s from %s.in, for CPython 3.11 on Linux"
        % (datetime.date.today().isoformat(), env),
        "# x86_64 (Debian bookworm). Do not edit: change %s.in and make it again." % env,
    ]
    for key in sorted(pins):
        name, version = pins[key]
        lines.append("%s==%s %s" % (name, version, " ".join(
            "--hash=sha256:" + h for h in file_hashes(name, version, index))))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("python_lock: wrote %s (%d packages)" % (path, len(pins)), file=sys.stderr)
    return path


def resolve(env, scratch, base):
    """Installs ENV.in in a scratch venv the way pip resolves it (on top of BASE's site-packages
    for a Spark environment) and returns (venv, its packages)."""
    venv = os.path.join(scratch, env)
    make_venv(venv, base)
    pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
           "--disable-pip-version-check"]
    if base:  # base's build tools, which its packages may need (torch: a newer setuptools)
        tools = installed(base)
        run(pip + ["--no-deps"] + ["%s==%s" % tools[t] for t in BUILD_TOOLS if t in tools])
    else:
        run(pip + ["wheel"])
    run(pip + ["--no-build-isolation", "-r", os.path.join(LOCKS, env + ".in")])
    pins = installed(site_packages(venv))
    if base:
        shared = sorted(set(pins) & set(installed(base)) - set(BUILD_TOOLS))
        if shared:
            raise SystemExit("python_lock: %s installs its own %s over base's: pin versions in "
                             "base.in that both accept" % (env, ", ".join(shared)))
    return venv, pins


def lock_command(args):
    unknown = sorted(set(args.envs) - set(ENVS))
    if unknown:
        raise SystemExit("python_lock: no environment %s (there are %s)"
                         % (", ".join(unknown), ", ".join(ENVS)))
    envs = args.envs or list(ENVS)
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple")
    scratch = tempfile.mkdtemp(prefix="python-lock-")
    try:
        made = {}
        if "base" in envs:
            made["base"] = resolve("base", scratch, None)
        else:  # the Spark environments on top of base as it is locked
            install(os.path.join(scratch, "base"), os.path.join(LOCKS, "base.lock"))
        base_site = site_packages(os.path.join(scratch, "base"))
        for env in envs:
            if env != "base":
                made[env] = resolve(env, scratch, base_site)
        for env, (venv, pins) in made.items():
            found = problems(venv, write_lock(env, pins, index))
            if found:
                raise SystemExit("python_lock: %s: %s" % (env, "; ".join(found)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="check a venv against its lock")
    install_parser = sub.add_parser("install", help="make a venv anew from its lock, and check it")
    for p in (check, install_parser):
        p.add_argument("venv")
        p.add_argument("lock")
    install_parser.add_argument("--base", help="a site-packages folder the venv sees (.pth)")
    lock = sub.add_parser("lock", help="resolve ENV.in and write ENV.lock (needs PyPI)")
    lock.add_argument("envs", nargs="*", metavar="ENV")
    args = parser.parse_args()
    try:
        return {"check": check_command, "install": install_command,
                "lock": lock_command}[args.command](args)
    except (OSError, ValueError) as e:  # a lock that cannot be read
        print("python_lock: %s" % e, file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print("python_lock: %s exited %d" % (" ".join(e.cmd), e.returncode), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
