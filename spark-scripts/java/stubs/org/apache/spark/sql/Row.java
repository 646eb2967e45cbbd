package org.apache.spark.sql;

/** Compile-time declaration of the part of Spark's Row (a Scala trait) that sparktorch uses. */
public interface Row {
  int size();

  Object get(int i);

  <T> java.util.List<T> getList(int i);
}
