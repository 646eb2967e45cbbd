package org.apache.spark.ml.linalg;

/** Compile-time declaration of the part of Spark ML's DenseVector that sparktorch uses. */
public abstract class DenseVector implements Vector {
  public abstract double[] values();
}
