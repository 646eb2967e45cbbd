"""Pipes one partition's rows through the sparktorch binary, as Spark's PipedRDD does.

`pipe_partition` is what each Spark task runs (inside `mapPartitions` on the barrier RDD): it
starts the binary, writes the rows to its stdin from a thread of its own while the caller reads
its stdout, so that a partition larger than the pipes' buffers never deadlocks, and copies the
binary's stderr to the task's stderr (the executor log). A non-zero exit raises
SparktorchError with the binary's last error lines, which Spark shows as the task's failure.
"""
import collections
import os
import subprocess
import sys
import threading


class SparktorchError(RuntimeError):
    """The binary exited with a non-zero status. `code` is that status (see `man sparktorch`,
    EXIT STATUS), `stderr_tail` its last lines on stderr. `what` says what ran, for the
    message (default: the binary's name and subcommand)."""

    def __init__(self, command, code, stderr_tail, what=None):
        self.command = list(command)
        self.code = code
        self.stderr_tail = list(stderr_tail)
        if what is None:  # "sparktorch train" out of [.../sparktorch, -q, train, ...]
            subcommand = [a for a in self.command[1:3] if not a.startswith("-")][:1]
            what = " ".join([os.path.basename(self.command[0])] + subcommand)
        last = "\n".join(self.stderr_tail) or "(nothing on stderr)"
        how = "was killed by signal %d" % -code if code < 0 else "exited with status %d" % code
        super().__init__("%s %s:\n%s" % (what, how, last))


def pipe_partition(rows, command, env=None, log=None, tail_lines=20, what=None):
    """Runs `command` (a list: the binary and its arguments) with `rows` on its stdin, one line
    each (str, without the newline), and yields its stdout lines without their newlines.

    Its stderr goes to `log` (default: sys.stderr) as it comes, and its last `tail_lines` lines
    are kept for the error. Raises SparktorchError (saying `what` ran) when it exits with a
    non-zero status, and
    re-raises an exception of the rows iterator itself. Stopping the iteration early ends the
    process."""
    log = sys.stderr if log is None else log
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    tail = collections.deque(maxlen=tail_lines)
    failure = []  # an exception of the rows iterator, raised in the caller's thread

    def write_rows():
        try:
            for row in rows:  # an error here is the partition's: raised in the caller
                try:
                    process.stdin.write(row.encode("utf-8") + b"\n")
                except (BrokenPipeError, ValueError):
                    return  # the binary stopped reading (it failed: its exit status says why)
        except BaseException as e:  # pylint: disable=broad-except
            failure.append(e)
            process.kill()
        finally:
            try:
                process.stdin.close()
            except (BrokenPipeError, ValueError):
                pass

    def copy_stderr():
        for raw in process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            tail.append(line)
            log.write(line + "\n")
        log.flush()

    writer = threading.Thread(target=write_rows, name="sparktorch-stdin", daemon=True)
    reader = threading.Thread(target=copy_stderr, name="sparktorch-stderr", daemon=True)
    writer.start()
    reader.start()
    finished = False
    try:
        for raw in process.stdout:
            yield raw.decode("utf-8").rstrip("\n")
        finished = True
    finally:
        if not finished:
            process.kill()
        code = process.wait()
        writer.join()
        reader.join()
        process.stdout.close()
        process.stderr.close()
    if failure:
        raise failure[0]
    if code != 0:
        raise SparktorchError(command, code, tail, what)
