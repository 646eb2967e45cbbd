"""`sparktorch serve` on the driver: the tracker of a synchronous job, or the parameter server
of a hogwild one, for the lifetime of one attempt of a job.

`Serve` starts it with the job's secret in its environment (never on its command line), waits
until it listens, and gives the address the tasks should use, with the host Spark tasks reach
the driver at (`spark.driver.host`). A serve that cannot start (the port is taken, a bad model)
raises ServeError with its own message before any Spark work starts. Its stderr goes to the
driver's stderr as it comes; its stdout (hogwild: the summary record) is kept.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time


class ServeError(RuntimeError):
    """`sparktorch serve` could not start, or ended with a non-zero status. `code` is that
    status (None when it did not start in time), `stderr_tail` its last lines."""

    def __init__(self, message, code, stderr_tail):
        self.code = code
        self.stderr_tail = list(stderr_tail)
        super().__init__(message)


def last_error(lines):
    """The most telling of sparktorch's stderr lines: the last `error:` line, else the last."""
    for line in reversed(lines):
        if "error:" in line:
            return line
    return lines[-1] if lines else "(nothing on stderr)"


class Serve:
    """One `sparktorch serve` process. `args` are serve's arguments after the binary (from
    options.serve_flags); `env` its environment; `host` replaces the host part of the address
    it reports (None keeps it). Raises ServeError when it exits or does not listen within
    `start_timeout` seconds. Not thread-safe: the driver's job thread owns it."""

    def __init__(self, binary, global_flags, args, env, host=None, model_output=False,
                 start_timeout=60.0, log=None):
        self.dir = tempfile.mkdtemp(prefix="sparktorch-serve-")
        self.log = sys.stderr if log is None else log
        self.model_path = os.path.join(self.dir, "model.pt") if model_output else None
        port_file = os.path.join(self.dir, "address")
        command = [binary] + list(global_flags) + list(args) + ["--port-file", port_file]
        if self.model_path:
            command += ["--output", self.model_path]
        self.command = command
        self.tail = collections.deque(maxlen=20)
        self.stdout = []
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env)
        self.threads = [threading.Thread(target=self._copy_stderr, daemon=True),
                        threading.Thread(target=self._keep_stdout, daemon=True)]
        for t in self.threads:
            t.start()
        deadline = time.monotonic() + start_timeout
        while not self._address_written(port_file):
            if self.process.poll() is not None:
                self._join()
                raise ServeError("sparktorch serve could not start (exit status %d): %s"
                                 % (self.process.returncode, last_error(self.tail)),
                                 self.process.returncode, self.tail)
            if time.monotonic() > deadline:
                self.kill()
                raise ServeError("sparktorch serve did not listen within %g s" % start_timeout,
                                 None, self.tail)
            time.sleep(0.05)
        with open(port_file) as f:
            listened = f.read().strip()
        self.port = int(listened.rpartition(":")[2])
        self.address = "%s:%d" % (host, self.port) if host else listened

    @staticmethod
    def _address_written(path):
        try:
            with open(path) as f:
                return f.read().endswith("\n")
        except FileNotFoundError:
            return False

    def _copy_stderr(self):
        for raw in self.process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.tail.append(line)
            self.log.write(line + "\n")
            self.log.flush()

    def _keep_stdout(self):
        for raw in self.process.stdout:
            self.stdout.append(raw.decode("utf-8").rstrip("\n"))

    def _join(self):
        self.process.wait()
        for t in self.threads:
            t.join()
        self.process.stdout.close()
        self.process.stderr.close()

    def wait(self, timeout):
        """Waits up to `timeout` seconds for serve to exit; returns its status, or None when it
        is still running."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._join()
        return self.process.returncode

    def finish(self, timeout):
        """Waits for serve to exit by itself and returns its stdout lines. Raises ServeError
        when it exits with a non-zero status or is still running after `timeout` seconds
        (then it is killed)."""
        code = self.wait(timeout)
        if code is None:
            self.kill()
            raise ServeError("sparktorch serve did not finish within %g s after the tasks"
                             % timeout, None, self.tail)
        if code != 0:
            raise ServeError("sparktorch serve exited with status %d: %s"
                             % (code, last_error(self.tail)), code, self.tail)
        return self.stdout

    def model(self):
        """The model file serve wrote (hogwild), as bytes."""
        with open(self.model_path, "rb") as f:
            return f.read()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self._join()

    def close(self):
        """Ends serve if it still runs and removes its files."""
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
