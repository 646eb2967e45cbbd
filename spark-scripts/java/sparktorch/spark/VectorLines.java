package sparktorch.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * A Spark ML vector cell of a row as Spark SQL holds it (VectorUDT's struct: type, size,
 * indices, values) written as its line of the vector row format, the line FeaturesText and the
 * caller's SQL would give for it, without making the row's Java objects or a string: dense as
 * {@code <BASE64>} of the values as little-endian float32, a sparse vector with at most one
 * nonzero in {@link FeaturesText#SPARSE_RATIO} as Spark's text of it ({@code (size,[i,...],[v,...])},
 * the values as Double.toString writes them), a null cell as {@code null}. One instance per
 * task: it keeps its buffers from row to row.
 */
final class VectorLines {
  private static final byte[] NULL_LINE = "null".getBytes(StandardCharsets.UTF_8);
  private static final byte SPARSE = 0;  // VectorUDT's type field: 0 sparse, 1 dense

  private final Base64.Encoder base64 = Base64.getEncoder();
  private ByteBuffer floats = ByteBuffer.allocate(0);
  private byte[] encoded = new byte[0];

  /** Writes cell `ordinal` of `row` (a vector) and a newline to `out`. */
  void write(InternalRow row, int ordinal, OutputStream out) throws IOException {
    if (row.isNullAt(ordinal)) {
      out.write(NULL_LINE);
      out.write('\n');
      return;
    }
    InternalRow vector = row.getStruct(ordinal, 4);
    ArrayData values = vector.getArray(3);
    int size;
    if (vector.getByte(0) == SPARSE) {
      size = vector.getInt(1);
      ArrayData indices = vector.getArray(2);
      if ((long) indices.numElements() * FeaturesText.SPARSE_RATIO < size) {
        writeSparseText(size, indices, values, out);
        return;
      }
      prepare(size);
      for (int i = 0; i < size; i++) {
        floats.putFloat(4 * i, 0f);
      }
      for (int k = 0, n = indices.numElements(); k < n; k++) {
        floats.putFloat(4 * indices.getInt(k), (float) values.getDouble(k));
      }
    } else {
      size = values.numElements();
      prepare(size);
      for (int i = 0; i < size; i++) {
        floats.putFloat(4 * i, (float) values.getDouble(i));
      }
    }
    int length = base64.encode(floats.array(), encoded);
    out.write('<');
    out.write(encoded, 0, length);
    out.write('>');
    out.write('\n');
  }

  /** Buffers for `size` values: their float32 bytes (exactly 4 * size) and base64. */
  private void prepare(int size) {
    if (floats.capacity() != 4 * size) {
      floats = ByteBuffer.allocate(4 * size).order(ByteOrder.LITTLE_ENDIAN);
      encoded = new byte[(4 * size + 2) / 3 * 4];
    }
  }

  private static void writeSparseText(int size, ArrayData indices, ArrayData values,
      OutputStream out) throws IOException {
    StringBuilder text = new StringBuilder(16 + 24 * indices.numElements());
    text.append('(').append(size).append(",[");
    for (int k = 0, n = indices.numElements(); k < n; k++) {
      text.append(k == 0 ? "" : ",").append(indices.getInt(k));
    }
    text.append("],[");
    for (int k = 0, n = values.numElements(); k < n; k++) {
      text.append(k == 0 ? "" : ",").append(values.getDouble(k));
    }
    text.append("])\n");
    out.write(text.toString().getBytes(StandardCharsets.UTF_8));
  }
}
