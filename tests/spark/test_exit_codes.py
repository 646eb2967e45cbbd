"""sparktorch_spark.exit_codes names the binary's exit statuses once for the Python side: they
must be cli/exit_codes.h's. Environment: REPO."""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.environ["REPO"], "spark-scripts"))

from sparktorch_spark import exit_codes  # noqa: E402

# cli/exit_codes.h's kExitBadInput is exit_codes.BAD_INPUT, and so on.
PYTHON_NAME = {"Ok": "OK", "Usage": "USAGE", "BadInput": "BAD_INPUT", "BadSpec": "BAD_SPEC",
               "BadModel": "BAD_MODEL", "NoDevice": "NO_DEVICE", "Rendezvous": "RENDEZVOUS",
               "Spill": "SPILL", "Output": "OUTPUT", "Internal": "INTERNAL", "PeerLost": "PEER_LOST",
               "PeerFailed": "PEER_FAILED", "Refused": "REFUSED"}


class ExitCodesTest(unittest.TestCase):
    def test_every_status_of_the_binary_has_its_value_here(self):
        with open(os.path.join(os.environ["REPO"], "cli", "exit_codes.h")) as f:
            header = dict(re.findall(r"constexpr int kExit(\w+) = (\d+);", f.read()))
        self.assertEqual(set(header), set(PYTHON_NAME))
        for name, value in header.items():
            self.assertEqual(getattr(exit_codes, PYTHON_NAME[name]), int(value), name)

    def test_a_status_is_described_by_its_meaning_or_its_signal(self):
        self.assertEqual(exit_codes.describe(3), "exit status 3 (a row that cannot be read)")
        self.assertEqual(exit_codes.describe(127),
                         "exit status 127 (no sparktorch binary on the executor)")
        self.assertEqual(exit_codes.describe(-9), "killed by signal 9")  # as Python reports it
        self.assertEqual(exit_codes.describe(137), "killed by signal 9")  # as the JVM does
        self.assertEqual(exit_codes.describe(1), "exit status 1")

    def test_only_a_lost_or_missing_task_is_worth_another_attempt(self):
        self.assertEqual(set(exit_codes.RETRYABLE), {exit_codes.PEER_LOST, exit_codes.RENDEZVOUS})
        self.assertFalse(set(exit_codes.RETRYABLE) & set(exit_codes.DETERMINISTIC))


if __name__ == "__main__":
    unittest.main(verbosity=2)
