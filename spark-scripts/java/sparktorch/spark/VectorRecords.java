package sparktorch.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.unsafe.Platform;

/**
 * A Spark ML vector cell of a row as Spark SQL holds it (VectorUDT's struct: type, size,
 * indices, values) written as a record of the float32 row format (sparktorch-formats(7)),
 * without making the row's Java objects, a string or base64: a little-endian uint32 head, then
 * the values as little-endian float32. Dense: the head is the size, the values follow. A sparse
 * vector with fewer nonzeros than half its size: the head is 2^31 + the count, then the size,
 * the indices and the values. A null cell: the head {@link #NULL_ROW}. One instance per task:
 * it keeps its buffer from row to row.
 */
final class VectorRecords {
  static final int SPARSE_BIT = 0x80000000;
  static final int NULL_ROW = 0xFFFFFFFF;
  static final int GROUP_END = 0xFFFFFFFE;
  private static final byte SPARSE = 0;  // VectorUDT's type field: 0 sparse, 1 dense

  private ByteBuffer record = ByteBuffer.allocate(1 << 12).order(ByteOrder.LITTLE_ENDIAN);
  private float[] floats = new float[0];

  /** Writes cell `ordinal` of `row` (a vector) as a record to `out`. */
  void write(InternalRow row, int ordinal, OutputStream out) throws IOException {
    if (row.isNullAt(ordinal)) {
      writeHead(NULL_ROW, out);
      return;
    }
    InternalRow vector = row.getStruct(ordinal, 4);
    ArrayData values = vector.getArray(3);
    if (vector.getByte(0) == SPARSE) {
      int size = vector.getInt(1);
      ArrayData indices = vector.getArray(2);
      int count = indices.numElements();
      if (2L * count < size) {
        prepare(8 + 8L * count);
        record.putInt(0, SPARSE_BIT | count).putInt(4, size);
        for (int k = 0; k < count; k++) {
          record.putInt(8 + 4 * k, indices.getInt(k));
          record.putFloat(8 + 4 * count + 4 * k, (float) values.getDouble(k));
        }
        out.write(record.array(), 0, 8 + 8 * count);
        return;
      }
      prepare(4 + 4L * size);
      record.putInt(0, size);
      for (int i = 0; i < size; i++) {
        record.putFloat(4 + 4 * i, 0f);
      }
      for (int k = 0; k < count; k++) {
        record.putFloat(4 + 4 * indices.getInt(k), (float) values.getDouble(k));
      }
      out.write(record.array(), 0, 4 + 4 * size);
      return;
    }
    // Dense: the doubles read where Spark holds them and narrowed into a float[], put as float32
    // in one bulk copy: a ByteBuffer put a value costs three times as much.
    int size = values.numElements();
    prepare(4 + 4L * size);
    if (floats.length < size) {
      floats = new float[Math.max(size, 2 * floats.length)];
    }
    if (values instanceof UnsafeArrayData) {
      UnsafeArrayData unsafe = (UnsafeArrayData) values;
      Object base = unsafe.getBaseObject();
      long at = unsafe.getBaseOffset() + UnsafeArrayData.calculateHeaderPortionInBytes(size);
      for (int i = 0; i < size; i++) {
        floats[i] = (float) Platform.getDouble(base, at + 8L * i);
      }
    } else {
      for (int i = 0; i < size; i++) {
        floats[i] = (float) values.getDouble(i);
      }
    }
    record.putInt(0, size);
    record.position(4);
    record.asFloatBuffer().put(floats, 0, size);
    record.position(0);
    out.write(record.array(), 0, 4 + 4 * size);
  }

  /** Writes a record that is only its head: {@link #NULL_ROW} or {@link #GROUP_END}. */
  void writeHead(int head, OutputStream out) throws IOException {
    record.putInt(0, head);
    out.write(record.array(), 0, 4);
  }

  /** A buffer of at least `bytes`. */
  private void prepare(long bytes) {
    if (bytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("a vector of " + bytes + " bytes as float32");
    }
    if (record.capacity() < bytes) {
      record = ByteBuffer.allocate((int) Math.max(bytes, 2L * record.capacity()))
          .order(ByteOrder.LITTLE_ENDIAN);
    }
  }
}
