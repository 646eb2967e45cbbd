"""The exit statuses of the sparktorch binary (`man sparktorch`, EXIT STATUS), named once.

They are the values of cli/exit_codes.h (tests/spark/test_exit_codes.py checks that they agree),
plus NOT_FOUND, the status of the tasks' launcher when it finds no binary (as a shell's 127).
"""

OK = 0
USAGE = 2          # bad flags
BAD_INPUT = 3      # rows that cannot be read
BAD_SPEC = 4       # a model spec or training config that does not work
BAD_MODEL = 5      # a model file or record stream that cannot be read
NO_DEVICE = 6      # the device is not there
RENDEZVOUS = 69    # not every rank or worker arrived in time
INTERNAL = 70      # a bug, or LibTorch failing unexpectedly
SPILL = 73         # rows cannot go to the spill file (local directory full or unwritable)
OUTPUT = 74        # the output cannot be written
PEER_LOST = 75     # a rank, the tracker or the parameter server was lost
PEER_FAILED = 76   # another rank failed; its message is quoted
REFUSED = 77       # the tracker or parameter server refused this process
NOT_FOUND = 127    # the launcher found no sparktorch binary on the executor

# What each status means, for messages.
MEANING = {
    USAGE: "bad flags",
    BAD_INPUT: "a row that cannot be read",
    BAD_SPEC: "a model spec or training config that does not work",
    BAD_MODEL: "a model that cannot be read",
    NO_DEVICE: "the device is not there",
    RENDEZVOUS: "not every task arrived in time",
    INTERNAL: "an internal error",
    SPILL: "no room for the rows in the executor's local directory",
    OUTPUT: "the output cannot be written",
    PEER_LOST: "another task or the driver's serve was lost",
    PEER_FAILED: "another task failed",
    REFUSED: "refused by the driver's serve",
    NOT_FOUND: "no sparktorch binary on the executor",
}

# A job that ended with these (from serve, or from a task) may succeed when run again: a task
# was lost, or never arrived. Any other failure would happen again.
RETRYABLE = (RENDEZVOUS, PEER_LOST)

# A task that exits with these failed on its own, the same way on any attempt.
DETERMINISTIC = (USAGE, BAD_INPUT, BAD_SPEC, BAD_MODEL, NO_DEVICE, NOT_FOUND)


def describe(status):
    """'exit status 3 (a row that cannot be read)', or 'signal 9' for a process that was killed
    (negative, as Python reports it, or 128 + N, as the JVM does)."""
    if status < 0:
        return "killed by signal %d" % -status
    if status > 128 and status not in MEANING:
        return "killed by signal %d" % (status - 128)
    meaning = MEANING.get(status)
    return "exit status %d%s" % (status, " (%s)" % meaning if meaning else "")
