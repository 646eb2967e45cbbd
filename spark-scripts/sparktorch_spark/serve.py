"""`sparktorch serve` on the driver: the tracker of a synchronous job, or the parameter server
of a hogwild one, for the lifetime of one attempt of a job.

`Serve` binds the listening socket itself and hands it to serve (`--listen-fd`), so the address
the tasks should use (with the host Spark tasks reach the driver at, `spark.driver.host`) is
known at once: a tracker's tasks can start while serve is still starting (loading LibTorch
takes most of a second), and reach it when it accepts. A hogwild parameter server is waited
for until it listens, so that a bad model raises ServeError with serve's own message before any
Spark work starts; a port that cannot be bound raises ServeError at once. serve runs with the
job's secret in its environment (never on its command line); its stderr goes to the driver's
stderr as it comes; its stdout (hogwild: the summary record) is kept.
"""
import collections
import os
import shutil
import socket
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
    """One `sparktorch serve` process, listening on `listen` ((host, port); port 0: a free
    one; None: any free port, on every interface with a SPARKTORCH_SECRET in `env`, else on
    loopback, as serve does), a socket this constructor binds. `args` are serve's other
    arguments after the binary (from options.serve_flags); `env` its environment; `host`
    replaces the host part of the address the tasks get (None: the listening address). With
    `wait`, waits until serve listens, and raises ServeError when it exits first or does not
    listen within `start_timeout` seconds. Raises ServeError when the socket cannot be bound. Not
    thread-safe: the driver's job thread owns it."""

    def __init__(self, binary, global_flags, args, env, listen=None, host=None,
                 wait=True, start_timeout=60.0, log=None):
        self.log = sys.stderr if log is None else log
        if listen is None:
            secret = (os.environ if env is None else env).get("SPARKTORCH_SECRET")
            listen = ("0.0.0.0" if secret else "127.0.0.1", 0)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(listen)
            listener.listen(128)
        except OSError as e:
            listener.close()
            raise ServeError("sparktorch serve cannot listen on %s:%d: %s"
                             % (listen[0], listen[1], e.strerror or e), None, []) from None
        self.dir = tempfile.mkdtemp(prefix="sparktorch-serve-")
        self.model_path = os.path.join(self.dir, "model.pt")
        port_file = os.path.join(self.dir, "address")
        command = ([binary] + list(global_flags) + list(args) +
                   ["--listen-fd", str(listener.fileno()), "--port-file", port_file,
                    "--output", self.model_path])
        self.command = command
        self.tail = collections.deque(maxlen=20)
        self.stdout = []
        bound, self.port = listener.getsockname()[:2]
        self.address = "%s:%d" % (host or (socket.gethostname() if bound == "0.0.0.0" else bound),
                                  self.port)
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            env=env, pass_fds=(listener.fileno(),))
        finally:
            # serve owns the socket now: should it end, the tasks find nothing there.
            listener.close()
        self.threads = [threading.Thread(target=self._copy_stderr, daemon=True),
                        threading.Thread(target=self._keep_stdout, daemon=True)]
        for t in self.threads:
            t.start()
        deadline = time.monotonic() + start_timeout
        while wait and not self._address_written(port_file):
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
        """The model file serve wrote (hogwild: the parameter server's; sync: the one rank 0
        sent, `train --send-model`), as bytes; None when it wrote none."""
        try:
            with open(self.model_path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self._join()

    def close(self):
        """Ends serve if it still runs and removes its files."""
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def driver_host(sc):
    """The address tasks reach the driver at, as Spark's own executors do."""
    return sc.getConf().get("spark.driver.host", None) or socket.getfqdn()


def listen_host(bind_address, host):
    """Where the driver's serve listens, as Spark's driver RPC does: `spark.driver.bindAddress`
    when set (`bind_address`), else the address `host` (spark.driver.host) resolves to, so that a
    driver with several interfaces (a docker bridge, a second NIC) listens only on the one its
    executors reach it by. Every interface ("0.0.0.0") when that address is not this machine's
    (a driver behind NAT advertises an address it cannot bind) or is a loopback address (a name
    that resolves to 127.0.1.1 on the driver, as Debian's /etc/hosts has it, may resolve to the
    host's real address on the executors)."""
    if bind_address:
        return bind_address
    try:
        address = socket.gethostbyname(host)
        if address.startswith("127."):
            return "0.0.0.0"
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((address, 0))
        return address
    except OSError:
        return "0.0.0.0"