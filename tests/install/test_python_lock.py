"""install.python_lock: examples/python_lock.py and the lock files it made (examples/python-locks/).

Without the network and without the real environments: the lock files pin every direct
requirement of their .in file at its version, each line with hashes, no package in two of them
(but the build tools); the check names the package at fault and both versions in one line
(a real venv, made here, then changed by hand); a wheel's tags decide whether its hash is kept.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.environ.get("REPO", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "examples"))

import python_lock  # noqa: E402  pylint: disable=wrong-import-position

LOCKS = os.path.join(REPO, "examples", "python-locks")
TOOL = os.path.join(REPO, "examples", "python_lock.py")
HASH = "--hash=sha256:" + "0" * 64


def requirements(path):
    """[(name, '==version' or '')] of a .in file."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                m = re.match(r"^([A-Za-z0-9._-]+)(\[[^\]]*\])?(==\S+)?$", line)
                assert m, "%s: %r" % (path, line)
                out.append((m.group(1), m.group(3) or ""))
    return out


class TheLocks(unittest.TestCase):
    def test_each_lock_pins_its_in_files_requirements_at_their_versions(self):
        for env in python_lock.ENVS:
            pins = python_lock.read_lock(os.path.join(LOCKS, env + ".lock"))
            for name, version in requirements(os.path.join(LOCKS, env + ".in")):
                key = python_lock.normalize(name)
                self.assertIn(key, pins, "%s.lock has no %s" % (env, name))
                if version:
                    self.assertEqual("==" + pins[key][1], version, "%s.lock: %s" % (env, name))

    def test_every_package_is_pinned_exactly_with_hashes_and_the_build_tools_too(self):
        for env in python_lock.ENVS:
            path = os.path.join(LOCKS, env + ".lock")
            with open(path) as f:
                lines = [line for line in f if line.strip() and not line.startswith("#")]
            self.assertEqual(len(lines), len(python_lock.read_lock(path)), path)
            for line in lines:
                self.assertRegex(line, r"^[A-Za-z0-9._-]+==[^\s=]+( --hash=sha256:[0-9a-f]{64})+$")
            # Each venv has its own pip and setuptools; a Spark one sees base's wheel.
            for tool in python_lock.BUILD_TOOLS[:2] + (("wheel",) if env == "base" else ()):
                self.assertIn(tool, python_lock.read_lock(path), "%s.lock: %s" % (env, tool))

    def test_a_spark_environment_installs_nothing_that_base_has(self):
        base = set(python_lock.read_lock(os.path.join(LOCKS, "base.lock")))
        for env in ("spark-3.5", "spark-4"):
            spark = set(python_lock.read_lock(os.path.join(LOCKS, env + ".lock")))
            self.assertEqual(sorted(spark & base - set(python_lock.BUILD_TOOLS)), [], env)

    def test_numpy_1_pandas_2_and_one_pyarrow_for_both_spark_lines(self):
        base = python_lock.read_lock(os.path.join(LOCKS, "base.lock"))
        self.assertRegex(base["numpy"][1], r"^1\.")
        self.assertRegex(base["pandas"][1], r"^2\.")
        self.assertIn("pyarrow", base)

    def test_a_line_without_a_hash_is_refused_with_its_place(self):
        with tempfile.NamedTemporaryFile("w", suffix=".lock", delete=False) as f:
            f.write("# a comment\nnumpy==1.26.4\n")
        try:
            with self.assertRaises(ValueError) as e:
                python_lock.read_lock(f.name)
            self.assertEqual(str(e.exception),
                             "%s:2: expected name==version --hash=sha256:..." % f.name)
        finally:
            os.unlink(f.name)


class WheelTags(unittest.TestCase):
    def test_only_wheels_for_cpython_3_11_on_linux_x86_64(self):
        fits = python_lock.wheel_fits
        self.assertTrue(fits("numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"))
        self.assertTrue(fits("grpcio-1.68.1-cp38-abi3-manylinux_2_17_x86_64.whl"))
        self.assertTrue(fits("py4j-0.10.9.7-py2.py3-none-any.whl"))
        self.assertTrue(fits("torch-2.15.0-cp311-cp311-linux_x86_64.whl"))
        self.assertFalse(fits("numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.whl"))
        self.assertFalse(fits("numpy-1.26.4-cp311-cp311-macosx_11_0_arm64.whl"))
        self.assertFalse(fits("numpy-1.26.4-cp311-cp311-manylinux_2_17_aarch64.whl"))
        self.assertFalse(fits("numpy-1.26.4-cp311-cp311-musllinux_1_1_x86_64.whl"))
        self.assertFalse(fits("grpcio-1.68.1-cp312-abi3-manylinux_2_17_x86_64.whl"))

    def test_file_names_give_name_and_version(self):
        self.assertEqual(python_lock.file_version("nvidia_cublas_cu12-12.8.4.1-py3-none-manylinux_2_27_x86_64.whl"),
                         ("nvidia-cublas-cu12", "12.8.4.1"))
        self.assertEqual(python_lock.file_version("pyspark-3.5.9.tar.gz"), ("pyspark", "3.5.9"))
        self.assertEqual(python_lock.file_version("Flask-SQLAlchemy-3.1.1.tar.gz"),
                         ("flask-sqlalchemy", "3.1.1"))
        self.assertIsNone(python_lock.file_version("README.txt"))


class Check(unittest.TestCase):
    """`python_lock.py check` on a real venv made here (pip and setuptools only)."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="python-lock-test-")
        cls.venv = os.path.join(cls.dir, "tiny")
        subprocess.run([python_lock.PYTHON, "-m", "venv", cls.venv], check=True)
        cls.site = python_lock.site_packages(cls.venv)
        cls.have = python_lock.installed(cls.site)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def lock(self, pins):
        path = os.path.join(self.dir, "tiny.lock")
        with open(path, "w") as f:
            f.write("".join("%s==%s %s\n" % (name, version, HASH) for name, version in pins))
        return path

    def check(self, lock):
        done = subprocess.run([sys.executable, TOOL, "check", self.venv, lock], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                              cwd=self.dir)
        return done.returncode, done.stdout + done.stderr

    def test_a_venv_that_is_its_lock_passes(self):
        self.assertEqual(self.check(self.lock(sorted(self.have.values()))), (0, ""))

    def test_one_line_names_the_package_and_both_versions(self):
        pins = [(n, "0.1" if n == "setuptools" else v) for n, v in sorted(self.have.values())]
        rc, out = self.check(self.lock(pins))
        self.assertEqual(rc, 1)
        self.assertEqual(out, "%s does not match tiny.lock: setuptools %s is installed, the lock "
                         "says 0.1\n" % (self.venv, self.have["setuptools"][1]))

    def test_a_package_added_by_hand_and_one_missing_are_named(self):
        extra = os.path.join(self.site, "pyarrow-26.0.1.dist-info")
        os.makedirs(extra)
        with open(os.path.join(extra, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: pyarrow\nVersion: 26.0.1\n")
        try:
            pins = sorted(self.have.values()) + [("numpy", "1.26.4")]
            rc, out = self.check(self.lock(pins))
        finally:
            shutil.rmtree(extra)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "%s does not match tiny.lock: numpy is not installed, the lock says "
                         "1.26.4 (and 1 more)\n" % self.venv)
        rc, out = self.check(self.lock(sorted(self.have.values())))
        self.assertEqual(rc, 0, out)

    def test_no_environment_there(self):
        lock = self.lock([])
        self.venv, venv = os.path.join(self.dir, "none"), self.venv
        try:
            self.assertEqual(self.check(lock), (1, "%s does not match tiny.lock: no Python "
                                                   "environment there\n" % self.venv))
        finally:
            self.venv = venv


if __name__ == "__main__":
    unittest.main()
