package sparktorch.spark;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.util.TaskCompletionListener;

/**
 * A partition's rows through a command in one pass, each row paired with the command's answer:
 * the JVM's twin of the Python layer's PredictTask, for {@code JavaRDD.mapPartitions}. The last
 * cell of every row is its line for the command's stdin (a String); the command answers each
 * line with one line on stdout, in order; each row comes out with the answer in place of that
 * last cell. The rows are read once, so the DataFrame may be any plan (a join, a shuffle):
 * nothing relies on reading it again in the same order.
 *
 * <p>The task's own thread reads the rows and writes them, as long as no answer is waiting;
 * a thread drains the command's stdout, so the command never waits on a full pipe while this
 * one waits on it. The rows written and not yet answered wait in a queue: a batch of the
 * command's and what the pipes hold. The command's stderr goes to this JVM's stderr (the task's
 * log) as it comes, and its last lines are quoted when it exits with a non-zero status. A task
 * that ends before every answer was read (a failure, a limit) kills the command.
 */
public final class PipeRows implements FlatMapFunction<Iterator<Row>, Row> {
  private static final long serialVersionUID = 1L;

  /** How many of the command's last stderr lines a failure quotes. */
  static final int TAIL_LINES = 20;

  private final ArrayList<String> command;
  private final HashMap<String, String> env;
  private final String what;

  /**
   * @param command the program and its arguments
   * @param env added to the program's environment
   * @param what what ran, for messages ("sparktorch predict (its stdin: ...)")
   */
  public PipeRows(List<String> command, Map<String, String> env, String what) {
    this.command = new ArrayList<>(command);
    this.env = new HashMap<>(env);
    this.what = what;
  }

  @Override
  public Iterator<Row> call(Iterator<Row> rows) throws IOException {
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(env);
    Answers answers = new Answers(builder.start(), rows, what);
    TaskContext task = TaskContext.get();
    if (task != null) {
      task.addTaskCompletionListener(answers);
    }
    return answers;
  }

  /** The rows out, each written to the command before its answer is read. */
  static final class Answers implements Iterator<Row>, TaskCompletionListener {
    private static final String END = new String("the end of stdout");  // compared by identity

    private final Process process;
    private final Iterator<Row> rows;
    private final String what;
    private final OutputStream stdin;
    private final ArrayDeque<Row> pending = new ArrayDeque<>();  // written, not yet answered
    private final LinkedBlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private final ArrayDeque<String> tail = new ArrayDeque<>();  // guarded by itself
    private final Thread stderr;
    private boolean writing = true;
    private String next;  // the answer hasNext found, for next
    private boolean ended;

    Answers(Process process, Iterator<Row> rows, String what) {
      this.process = process;
      this.rows = rows;
      this.what = what;
      this.stdin = new BufferedOutputStream(process.getOutputStream(), 1 << 16);
      start("sparktorch stdout reader", this::readStdout);
      this.stderr = start("sparktorch stderr reader", this::copyStderr);
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
          String line = writing ? answers.poll() : answers.take();
          if (line == END) {
            finish();
            return false;
          }
          if (line != null) {
            next = line;
            return true;
          }
          writeRow();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
        throw new IllegalStateException(what + ": interrupted", e);
      }
    }

    @Override
    public Row next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      String line = next;
      next = null;
      Row row = pending.poll();
      if (row == null) {
        process.destroyForcibly();
        throw new IllegalStateException(what + " answered more lines than it was given rows");
      }
      Object[] cells = new Object[row.size()];
      for (int i = 0; i < cells.length - 1; i++) {
        cells[i] = row.get(i);
      }
      cells[cells.length - 1] = line;
      return RowFactory.create(cells);
    }

    /** The task ended: a command still running (the rows were not all read) is killed. */
    @Override
    public void onTaskCompletion(TaskContext context) {
      if (process.isAlive()) {
        process.destroyForcibly();
      }
    }

    private void writeRow() {
      if (!rows.hasNext()) {
        closeStdin();
        return;
      }
      Row row = rows.next();
      pending.add(row);
      try {
        stdin.write(String.valueOf(row.get(row.size() - 1)).getBytes(StandardCharsets.UTF_8));
        stdin.write('\n');
      } catch (IOException e) {
        closeStdin();  // the command stopped reading: it failed, and its exit status says why
      }
    }

    private void closeStdin() {
      writing = false;
      try {
        stdin.close();
      } catch (IOException e) {
        // as in writeRow: the command's status explains it
      }
    }

    /** After the command's stdout ended: its status, and every row answered. */
    private void finish() throws InterruptedException {
      ended = true;
      int status = process.waitFor();
      stderr.join();
      if (status != 0) {
        String how = "exited with status " + status
            + (status > 128 ? " (killed by signal " + (status - 128) + ")" : "");
        String last;
        synchronized (tail) {
          last = tail.isEmpty() ? "(nothing on stderr)" : String.join("\n", tail);
        }
        throw new IllegalStateException(what + " " + how + ":\n" + last);
      }
      if (!pending.isEmpty() || (writing && rows.hasNext())) {
        throw new IllegalStateException(what + " answered fewer lines than it was given rows");
      }
    }

    private void readStdout() {
      try (BufferedReader out = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8), 1 << 16)) {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          answers.add(line);
        }
      } catch (IOException e) {
        // the command was killed (the task ended early)
      } finally {
        answers.add(END);
      }
    }

    private void copyStderr() {
      try (BufferedReader err = new BufferedReader(
          new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
        for (String line = err.readLine(); line != null; line = err.readLine()) {
          System.err.println(line);
          synchronized (tail) {
            tail.addLast(line);
            if (tail.size() > TAIL_LINES) {
              tail.removeFirst();
            }
          }
        }
      } catch (IOException e) {
        // the command was killed
      }
    }

    private static Thread start(String name, Runnable body) {
      Thread thread = new Thread(body, name);
      thread.setDaemon(true);
      thread.start();
      return thread;
    }
  }
}
