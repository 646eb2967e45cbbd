package sparktorch.spark;

import java.util.Iterator;
import java.util.Map;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.resource.ResourceInformation;

/**
 * The GPUs Spark gave a training task, for its {@code sparktorch train --rank-from-stdin}: the
 * partition's first line, "RANK\tROW" (the rank prefix the Spark layer writes in SQL), becomes
 * "RANK gpu=ADDR[,ADDR...]\tROW" with the addresses of the task's "gpu" resource
 * ({@code TaskContext.resourcesJMap()}), which the binary takes as its device (`--device cuda`
 * or `auto`). {@code RDD.pipe} gives every task the same command and environment: the rows are
 * the one thing that differs between tasks. A task without GPUs, or a partition without rows,
 * passes through as it is. For {@code JavaRDD.mapPartitions} in the barrier stage that pipes
 * the rows.
 */
public final class TaskGpus implements FlatMapFunction<Iterator<String>, String> {
  private static final long serialVersionUID = 1L;

  /** The task's GPU addresses, comma-separated, or null when Spark gave it none. */
  static String gpus(TaskContext task) {
    if (task == null) {
      return null;
    }
    Map<String, ResourceInformation> resources = task.resourcesJMap();
    ResourceInformation gpu = resources == null ? null : resources.get("gpu");
    if (gpu == null || gpu.addresses().length == 0) {
      return null;
    }
    return String.join(",", gpu.addresses());
  }

  @Override
  public Iterator<String> call(Iterator<String> rows) {
    final String gpus = gpus(TaskContext.get());
    if (gpus == null) {
      return rows;
    }
    return new Iterator<String>() {
      private boolean first = true;

      @Override
      public boolean hasNext() {
        return rows.hasNext();
      }

      @Override
      public String next() {
        String line = rows.next();
        if (!first) {
          return line;
        }
        first = false;
        int tab = line.indexOf('\t');
        return tab < 0 ? line : line.substring(0, tab) + " gpu=" + gpus + line.substring(tab);
      }
    };
  }
}
