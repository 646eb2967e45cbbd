"""sparktorch on Spark: the driver-side module of spark-submit's entry points.

This package holds the parts that need no Spark, so that they are tested against the real
binary without it: `records` (splitting sparktorch's stdout records, reassembling and verifying
the model) and `runner` (piping one partition's rows through the binary, as Spark's PipedRDD
does). Standard library only; Python 3.8+.
"""
