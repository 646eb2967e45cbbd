package sparktorch.spark;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;
import org.apache.spark.ml.linalg.DenseVector;
import org.apache.spark.ml.linalg.SparseVector;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;

/**
 * The features of a row as the vector format's dense float32 form, {@code <BASE64>}: standard
 * base64 of the values as little-endian IEEE-754 float32 (sparktorch-formats(7), ROWS). Spark
 * SQL calls it, registered as a Java UDF, on a struct of the feature columns: one Spark ML
 * vector, or numbers and arrays of numbers, joined in order. It writes no decimal digits, which
 * is where Spark's own text ({@code CAST(vector AS STRING)}, Double.toString) spends its time.
 *
 * <p>It returns null where the text form is the better one, and the caller's SQL then writes
 * that: a row with a null cell (whose text names the null), and a sparse vector with at most
 * one nonzero in {@link #SPARSE_RATIO} (whose sparse text is shorter than the dense bytes).
 */
public final class FeaturesText implements UDF1<Row, String> {
  private static final long serialVersionUID = 1L;

  /** A sparse vector with fewer nonzeros than its size over this stays sparse text. */
  public static final int SPARSE_RATIO = 8;

  @Override
  public String call(Row row) {
    if (row == null) {
      return null;
    }
    int fields = row.size();
    if (fields == 1 && row.get(0) instanceof Vector) {
      return vector((Vector) row.get(0));
    }
    int size = 0;
    for (int i = 0; i < fields; i++) {
      Object cell = row.get(i);
      if (cell == null) {
        return null;
      }
      if (cell instanceof Number) {
        size += 1;
      } else if (cell instanceof Vector) {
        size += ((Vector) cell).size();
      } else {
        List<Object> list = row.getList(i);
        for (Object element : list) {
          if (!(element instanceof Number)) {
            return null;  // a null element: the text names it
          }
        }
        size += list.size();
      }
    }
    float[] values = new float[size];
    int at = 0;
    for (int i = 0; i < fields; i++) {
      Object cell = row.get(i);
      if (cell instanceof Number) {
        values[at++] = ((Number) cell).floatValue();
      } else if (cell instanceof Vector) {
        at = put((Vector) cell, values, at);
      } else {
        for (Object element : row.getList(i)) {
          values[at++] = ((Number) element).floatValue();
        }
      }
    }
    return text(values);
  }

  private static String vector(Vector v) {
    if (v instanceof SparseVector
        && (long) ((SparseVector) v).indices().length * SPARSE_RATIO < v.size()) {
      return null;
    }
    float[] values = new float[v.size()];
    put(v, values, 0);
    return text(values);
  }

  /** Writes `v` densely into values from `at`; returns the index after it. */
  private static int put(Vector v, float[] values, int at) {
    if (v instanceof DenseVector) {
      double[] d = ((DenseVector) v).values();
      for (int i = 0; i < d.length; i++) {
        values[at + i] = (float) d[i];
      }
    } else {
      SparseVector s = (SparseVector) v;
      int[] indices = s.indices();
      double[] d = s.values();
      for (int k = 0; k < indices.length; k++) {
        values[at + indices[k]] = (float) d[k];
      }
    }
    return at + v.size();
  }

  private static String text(float[] values) {
    ByteBuffer bytes = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
    bytes.asFloatBuffer().put(values);
    byte[] encoded = Base64.getEncoder().encode(bytes.array());
    char[] out = new char[encoded.length + 2];
    out[0] = '<';
    for (int i = 0; i < encoded.length; i++) {
      out[i + 1] = (char) encoded[i];
    }
    out[out.length - 1] = '>';
    return new String(out);
  }
}
