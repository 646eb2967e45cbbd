"""What the Spark layer asks of the driver's JVM through py4j, in one place.

PySpark 2.4 has no public Python API for some of what sparktorch needs, but the JVM's public
API has it and py4j reaches it: the JVM's own `RDD.pipe` (Spark's PipedRDD), which moves rows
from a DataFrame into a process without a Python worker in between, also in a barrier stage;
and the barrier task timers that Spark 2.4 leaves behind. Everything here takes a SparkContext
(or a DataFrame) and works on Spark 2.4.4 and 3.x alike.
"""
import atexit
import threading

_BARRIER_TIMER = "Barrier task timer for barrier() calls."
_cleanup_registered = set()  # ids of the gateways whose timers are ended at exit
_cleanup_lock = threading.Lock()


def is_local(sc):
    """Whether the tasks run inside the driver's JVM (`local`, `local[N]`, `local[*]`), not
    in executors of their own (`local-cluster[...]` and real clusters)."""
    master = sc.master
    return master == "local" or master.startswith("local[")


def end_barrier_timers(jvm, wait_ms=2000):
    """Ends the threads of the non-daemon timers that Spark's BarrierTaskContext starts and never
    cancels ("Barrier task timer for barrier() calls.": Spark 2.4 one per barrier task, 3.0 one
    per JVM; later versions make it a daemon). Tasks of a local master run in the driver's JVM,
    where such a thread keeps `spark-submit` from exiting after the Python program ends. Call
    only when no barrier() call can come any more: at exit. Returns how many it ended."""
    ended = 0
    for thread in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray():
        if thread.getName() != _BARRIER_TIMER or thread.isDaemon() or not thread.isAlive():
            continue
        try:
            # java.util.TimerThread ends once its queue is empty and no new tasks may come; the
            # interrupt wakes it to see that (the flag is read under the queue's monitor, after
            # the interrupt, which orders the write before the read).
            flag = thread.getClass().getDeclaredField("newTasksMayBeScheduled")
            flag.setAccessible(True)
            flag.setBoolean(thread, False)
            thread.interrupt()
            thread.join(wait_ms)
        except Exception:  # pylint: disable=broad-except  # a JVM that refuses the reflection
            pass
        if thread.isAlive():
            thread.stop()  # Java 8 to 19; a pending timer task (a barrier() call) keeps it alive
        ended += 1
    return ended


def end_barrier_timers_at_exit(sc):
    """Once per driver JVM, when the tasks run in it (a local master): ends Spark's barrier
    timers when this Python program exits, so that `spark-submit` exits too."""
    if not is_local(sc):
        return
    jvm = sc._jvm  # pylint: disable=protected-access
    with _cleanup_lock:
        if id(jvm) in _cleanup_registered:
            return
        _cleanup_registered.add(id(jvm))

    def cleanup():
        try:
            end_barrier_timers(jvm)
        except Exception:  # pylint: disable=broad-except  # the gateway is already gone
            pass

    atexit.register(cleanup)
