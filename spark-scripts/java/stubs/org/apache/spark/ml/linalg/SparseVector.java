package org.apache.spark.ml.linalg;

/** Compile-time declaration of the part of Spark ML's SparseVector that sparktorch uses. */
public abstract class SparseVector implements Vector {
  public abstract int[] indices();

  public abstract double[] values();
}
