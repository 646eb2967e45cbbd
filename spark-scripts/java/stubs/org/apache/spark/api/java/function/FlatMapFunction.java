package org.apache.spark.api.java.function;

/** Compile-time declaration of Spark's FlatMapFunction (JavaRDD.mapPartitions's argument). */
public interface FlatMapFunction<T, R> extends java.io.Serializable {
  java.util.Iterator<R> call(T t) throws Exception;
}
