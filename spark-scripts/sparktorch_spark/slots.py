"""The slots of a barrier stage: every task of it must run at once, so the number of tasks is
checked against what the master can give before Spark would wait for slots that never come."""
import os
import re
import time

from .options import OptionError


def barrier_slots(sc):
    """The tasks a barrier stage can run at once now: Spark's own count where this Spark has
    it (2.4 and 3.0 take no argument, 3.1 and later the default resource profile), else the
    default parallelism."""
    jsc = sc._jsc.sc()  # pylint: disable=protected-access
    try:
        return int(jsc.maxNumConcurrentTasks())
    except Exception:  # pylint: disable=broad-except  # Spark 3.1+: one argument
        pass
    try:
        profile = jsc.resourceProfileManager().defaultResourceProfile()
        return int(jsc.maxNumConcurrentTasks(profile))
    except Exception:  # pylint: disable=broad-except
        return sc.defaultParallelism


_LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,")
_LOCAL = re.compile(r"local\[\s*(\d+|\*)\s*(?:,\s*\d+\s*)?\]")


def master_slots(master, task_cpus=1, cpus=None):
    """The slots a master can ever give a barrier stage when its master URL fixes them:
    `local` 1, `local[N]` (and `local[N,F]`) N, `local[*]` the machine's cores,
    `local-cluster[W,C,M]` W*C, each divided by spark.task.cpus; None for real clusters, whose
    executors come and go."""
    found = _LOCAL_CLUSTER.match(master)
    if found:
        cores = int(found.group(1)) * int(found.group(2))
    elif master == "local":
        cores = 1
    else:
        found = _LOCAL.match(master)
        if not found:
            return None
        cores = (cpus or os.cpu_count() or 1) if found.group(1) == "*" else int(found.group(1))
    return cores // max(task_cpus, 1)


def _too_many(wanted, slots, now):
    return OptionError(
        "partitions=%d, but a barrier stage can get %d slots%s (executor cores / "
        "spark.task.cpus): every task of a barrier stage must run at once, so Spark would "
        "wait for slots that do not come; use partitions=%d or fewer, or give the job more "
        "executors or cores (barrier stages do not work with dynamic allocation)"
        % (wanted, slots, now, slots))


def plan_partitions(sc, current, wanted, barrier, wait_seconds=30.0, log=None):
    """The number of tasks: `wanted` when given, else the input's `current` partitions, at most
    the slots a barrier stage can get. Waits up to `wait_seconds` for executors to register
    (on a local master only until all of its fixed slots are there). Raises OptionError when
    `wanted` exceeds the slots: a barrier stage would wait for them."""
    if not barrier:
        return wanted or current
    fixed = master_slots(sc.master, int(sc.getConf().get("spark.task.cpus", "1")))
    if fixed is not None and wanted and wanted > fixed:
        raise _too_many(wanted, fixed, " on %s" % sc.master)
    need = min(wanted or 1, fixed) if fixed else (wanted or 1)
    slots = free_slots(sc, need, wait_seconds)
    if wanted and wanted > slots:
        raise _too_many(wanted, slots, " now")
    if slots < 1:
        raise OptionError("no executor registered within %g s: no slots for a barrier stage"
                          % wait_seconds)
    n = wanted or min(current, slots)
    if not wanted and current > slots and log:
        log.write("sparktorch: %d input partitions, %d slots: training with %d tasks\n"
                  % (current, slots, n))
    return n


def free_slots(sc, wanted, wait_seconds=30.0):
    """The tasks a barrier stage can run now, for a job run again after a lost task: waits up
    to `wait_seconds` for `wanted` slots (a lost executor's replacement registering), then says
    how many there are."""
    deadline = time.monotonic() + wait_seconds
    slots = barrier_slots(sc)
    while slots < wanted and time.monotonic() < deadline:
        time.sleep(0.5)
        slots = barrier_slots(sc)
    return slots
