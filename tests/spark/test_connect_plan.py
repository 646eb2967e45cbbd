"""sparktorch_spark.connect_plan without Spark: the slots a Spark Connect client reads from the
server's configuration on any master, and Spark's own failure of a barrier stage that got too
few slots turned into one line. (parquet_files needs a Connect plan: spark-real.*.connect.)"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.environ["REPO"], "spark-scripts"))

from sparktorch_spark.connect_plan import barrier_slots, too_few_slots  # noqa: E402
from sparktorch_spark.options import OptionError  # noqa: E402


def conf(**values):
    """spark.conf.get over `values` (dots written as underscores)."""
    given = {key.replace("_", "."): value for key, value in values.items()}
    return lambda key, default=None: given.get(key, default)


class BarrierSlotsTest(unittest.TestCase):
    def test_local_masters_count_from_their_url_divided_by_task_cpus(self):
        self.assertEqual(barrier_slots(conf(), "local[2]"), 2)
        self.assertEqual(barrier_slots(conf(spark_task_cpus="2"), "local-cluster[3,4,1024]"), 6)

    def test_fixed_executors_give_instances_times_cores_over_task_cpus(self):
        self.assertEqual(barrier_slots(conf(spark_executor_instances="3",
                                            spark_executor_cores="4"), "yarn"), 12)
        self.assertEqual(barrier_slots(conf(spark_executor_instances="3",
                                            spark_executor_cores="5", spark_task_cpus="2"),
                                       "k8s://https://198.18.0.1:6443"), 6)

    def test_standalone_cores_max_bounds_the_slots(self):
        self.assertEqual(barrier_slots(conf(spark_cores_max="8", spark_task_cpus="2"),
                                       "spark://198.18.0.1:7077"), 4)

    def test_unknown_without_those_settings(self):
        self.assertIsNone(barrier_slots(conf(), "spark://198.18.0.1:7077"))
        self.assertIsNone(barrier_slots(conf(spark_executor_instances="3"), "yarn"))
        self.assertIsNone(barrier_slots(conf(spark_cores_max="not a number"), "yarn"))

    def test_dynamic_allocation_is_refused_at_once(self):
        with self.assertRaises(OptionError) as caught:
            barrier_slots(conf(spark_dynamicAllocation_enabled="true"), "yarn")
        self.assertEqual(str(caught.exception),
                         "spark.dynamicAllocation.enabled is true on yarn: Spark does not run a "
                         "barrier stage with dynamic allocation; give the job a fixed number of "
                         "executors (spark.executor.instances)")


class TooFewSlotsTest(unittest.TestCase):
    SPARK = ("org.apache.spark.scheduler.BarrierJobSlotsNumberCheckFailed: [SPARK-24819]: "
             "Barrier execution mode does not allow run a barrier stage that requires more "
             "slots than the total number of slots in the cluster currently.")

    def test_sparks_check_becomes_one_line(self):
        self.assertEqual(too_few_slots("Job aborted.\n" + self.SPARK, 4, "spark://h:7077"),
                         "the 4 tasks of the barrier stage need 4 free slots at once and "
                         "spark://h:7077 has fewer (Spark's SPARK-24819 check); use fewer "
                         "partitions, or give the job more executors or cores")

    def test_other_failures_are_not_it(self):
        self.assertIsNone(too_few_slots("sparktorch rank 1 failed (exit status 3): a bad row",
                                        2, "yarn"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
