package org.apache.spark;

/** Compile-time declaration of the part of Spark's TaskContext that sparktorch uses. */
public abstract class TaskContext {
  public static TaskContext get() {
    throw new UnsupportedOperationException("a stub: Spark's own class runs");
  }

  public abstract TaskContext addTaskCompletionListener(
      org.apache.spark.util.TaskCompletionListener listener);
}
