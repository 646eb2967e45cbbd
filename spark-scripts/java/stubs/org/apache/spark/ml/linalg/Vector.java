package org.apache.spark.ml.linalg;

/** Compile-time declaration of the part of Spark ML's Vector (a Scala trait) sparktorch uses. */
public interface Vector {
  int size();
}
