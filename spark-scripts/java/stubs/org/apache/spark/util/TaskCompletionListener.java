package org.apache.spark.util;

/** Compile-time declaration of Spark's TaskCompletionListener. */
public interface TaskCompletionListener extends java.util.EventListener {
  void onTaskCompletion(org.apache.spark.TaskContext context);
}
