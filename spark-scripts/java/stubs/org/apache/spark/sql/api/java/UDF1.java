package org.apache.spark.sql.api.java;

/** Compile-time declaration of Spark's UDF1 (spark-sql); the real class is used at run time. */
public interface UDF1<T1, R> extends java.io.Serializable {
  R call(T1 t1) throws Exception;
}
