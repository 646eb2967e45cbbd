package sparktorch.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.TaskCompletionListener;

/**
 * A partition's rows through a command in one pass, each row paired with the command's answer:
 * the JVM's twin of the Python layer's PredictTask, for {@code JavaRDD.mapPartitions} over a
 * DataFrame's rows as Spark SQL holds them ({@code queryExecution().toRdd()}: InternalRow, so
 * no cell is converted to a Java object and back). What the command's stdin gets for each row
 * is its vector cell as a float32 record (written by {@link VectorRecords} from the cell's
 * bytes: `sparktorch predict --format float32`), or its last cell as a line (a string, written
 * as the UTF-8 bytes Spark holds); the command answers each row with one line on stdout, in
 * order; each row comes out with one more cell, the answer (a string, made from the line's
 * bytes). The rows are read once, so the DataFrame may be any plan (a join, a
 * shuffle): nothing relies on reading it again in the same order.
 *
 * <p>The command answers in groups (`sparktorch predict --group-end LINE`): after the
 * partition's rows comes the group's end (the line, or float32's group end record), and after
 * their answers the command echoes the line.
 * The process is then kept for the next task of this JVM with the same command
 * ({@link KeptProcess}), so a transform of many partitions starts one process per task slot,
 * not one per partition.
 *
 * <p>The task's own thread reads the rows and writes them, as long as no answer is waiting;
 * a thread drains the command's stdout, so the command never waits on a full pipe while this
 * one waits on it. The rows written and not yet answered wait in a queue: a batch of the
 * command's and what the pipes hold. The command's stderr goes to this JVM's stderr (the task's
 * log) as it comes, and its last lines are quoted when it exits with a non-zero status. A task
 * that ends before every answer was read (a failure, a limit) kills the command.
 */
public final class PipeRows implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
  private static final long serialVersionUID = 1L;
  private static final byte[] NULL_LINE = "null".getBytes(StandardCharsets.UTF_8);

  private final ArrayList<String> command;
  private final HashMap<String, String> env;
  private final String what;
  private final String groupEnd;
  private final long keepMillis;
  private final int vectorCell;

  /**
   * @param command the program and its arguments, which answer in groups ending with the line
   *     `groupEnd`
   * @param env added to the program's environment
   * @param what what ran, for messages ("sparktorch predict (its stdin: ...)")
   * @param groupEnd the line that ends a group, in and out
   * @param keepSeconds how long an idle process is kept for the next task (0: not kept)
   * @param vectorCell the row's cell (a Spark ML vector) whose float32 record the command gets
   *     ({@link VectorRecords}), or -1: the row's last cell is its line (a string)
   */
  public PipeRows(List<String> command, Map<String, String> env, String what, String groupEnd,
      double keepSeconds, int vectorCell) {
    this.command = new ArrayList<>(command);
    this.env = new HashMap<>(env);
    this.what = what;
    this.groupEnd = groupEnd;
    this.keepMillis = (long) (keepSeconds * 1000);
    this.vectorCell = vectorCell;
  }

  @Override
  public Iterator<InternalRow> call(Iterator<InternalRow> rows) throws IOException {
    Answers answers = new Answers(KeptProcess.take(command, env, groupEnd), rows);
    TaskContext task = TaskContext.get();
    if (task != null) {
      task.addTaskCompletionListener(answers);
    }
    return answers;
  }

  /** The rows out, each written to the command before its answer is read. */
  final class Answers implements Iterator<InternalRow>, TaskCompletionListener {
    private final KeptProcess kept;
    private final Iterator<InternalRow> rows;
    // Written, not yet answered: copies, as the rows a scan gives are reused.
    private final ArrayDeque<InternalRow> pending = new ArrayDeque<>();
    private final VectorRecords records = new VectorRecords();
    private boolean writing = true;
    private byte[][] answered = KeptProcess.NO_LINES;  // the last batch of answers taken
    private int taken;  // answers of `answered` already handed out
    private byte[] next;  // the answer hasNext found, for next
    private boolean ended;  // the group's answers were all read
    private boolean givenBack;

    Answers(KeptProcess kept, Iterator<InternalRow> rows) {
      this.kept = kept;
      this.rows = rows;
    }

    @Override
    public boolean hasNext() {
      if (next != null) {
        return true;
      }
      if (ended) {
        return false;
      }
      try {
        while (true) {
          if (taken < answered.length) {
            next = answered[taken++];
            return true;
          }
          byte[][] lines = writing ? kept.answers.poll() : kept.answers.take();
          if (lines == KeptProcess.GROUP_ENDED) {
            ended = true;
            if (!pending.isEmpty() || writing) {
              kept.kill();
              throw new IllegalStateException(
                  what + " answered fewer lines than it was given rows");
            }
            givenBack = true;
            kept.giveBack(keepMillis);
            return false;
          }
          if (lines == KeptProcess.EXITED) {
            ended = true;
            throw new IllegalStateException(what + " " + kept.exitReport());
          }
          if (lines != null) {
            answered = lines;
            taken = 0;
            continue;
          }
          writeRow();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        kept.kill();
        throw new IllegalStateException(what + ": interrupted", e);
      }
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      byte[] line = next;
      next = null;
      InternalRow row = pending.poll();
      if (row == null) {
        kept.kill();
        throw new IllegalStateException(what + " answered more lines than it was given rows");
      }
      return new JoinedRow(row, new GenericInternalRow(new Object[] {UTF8String.fromBytes(line)}));
    }

    /** The task ended: a command whose group did not end cleanly is killed. */
    @Override
    public void onTaskCompletion(TaskContext context) {
      if (!givenBack) {
        kept.kill();
      }
    }

    private void writeRow() {
      try {
        if (!rows.hasNext()) {
          writing = false;
          if (vectorCell >= 0) {
            records.writeHead(VectorRecords.GROUP_END, kept.stdin);
          } else {
            kept.stdin.write(groupEnd.getBytes(StandardCharsets.UTF_8));
            kept.stdin.write('\n');
          }
          kept.stdin.flush();
          return;
        }
        InternalRow row = rows.next().copy();
        pending.add(row);
        if (vectorCell >= 0) {
          records.write(row, vectorCell, kept.stdin);
          return;
        }
        int last = row.numFields() - 1;
        if (row.isNullAt(last)) {
          kept.stdin.write(NULL_LINE);
        } else {
          row.getUTF8String(last).writeTo(kept.stdin);
        }
        kept.stdin.write('\n');
      } catch (IOException e) {
        writing = false;  // the command stopped reading: it failed, and its exit status says why
      }
    }
  }
}
