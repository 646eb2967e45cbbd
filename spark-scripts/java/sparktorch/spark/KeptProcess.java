package sparktorch.spark;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A command that answers its stdin in groups (`sparktorch predict --group-end LINE`), kept
 * running in this JVM between the tasks that use it: starting `sparktorch predict` and loading
 * its model costs about half a second, which a Spark transform of many small partitions would
 * otherwise pay once a partition. A task {@link #take}s a process (an idle one with the same
 * command and environment, else a new one), writes its rows and the group's end line, reads
 * the answers up to the echoed end line, and {@link #giveBack}s it. An idle process is ended
 * (its stdin closed: it exits at the end of its input) after the keep time, or when this JVM
 * exits. A process whose group did not end cleanly (a failure, a task ended early) is killed,
 * never given back.
 */
final class KeptProcess {
  /** What {@link #answers} holds after the echoed group end (compared by identity). */
  static final byte[][] GROUP_ENDED = new byte[0][];
  /** What {@link #answers} holds after the command's stdout ended (compared by identity). */
  static final byte[][] EXITED = new byte[0][];
  /** No answers. */
  static final byte[][] NO_LINES = new byte[0][];

  /** How many of the command's last stderr lines a failure quotes. */
  static final int TAIL_LINES = 20;

  /** Idle processes by (command, environment, group end), the most recently used last. */
  private static final HashMap<List<Object>, ArrayDeque<KeptProcess>> IDLE = new HashMap<>();
  private static Thread reaper;  // guarded by IDLE

  final Process process;
  final OutputStream stdin;
  /**
   * The command's answers, in batches: the lines (without their newline) that one read of its
   * stdout completed, then GROUP_ENDED or EXITED. A batch, not a line, an entry: a queue's
   * lock and node a row cost as much as the rest of a row's answer.
   */
  final LinkedBlockingQueue<byte[][]> answers = new LinkedBlockingQueue<>();
  private final List<Object> key;
  private final String groupEnd;
  private final ArrayDeque<String> tail = new ArrayDeque<>();  // guarded by itself
  private final Thread stderr;
  private long idleSince;  // guarded by IDLE
  private long keepMillis;  // guarded by IDLE

  private KeptProcess(List<Object> key, Process process, String groupEnd) {
    this.key = key;
    this.process = process;
    this.groupEnd = groupEnd;
    this.stdin = new BufferedOutputStream(process.getOutputStream(), 1 << 16);
    start("sparktorch stdout reader", this::readStdout);
    this.stderr = start("sparktorch stderr reader", this::copyStderr);
  }

  /**
   * An idle process running `command` with `env` added to its environment, answering in groups
   * that end with the line `groupEnd`, or a new one.
   */
  static KeptProcess take(List<String> command, Map<String, String> env, String groupEnd)
      throws IOException {
    List<Object> key = Arrays.asList(new ArrayList<>(command), new HashMap<>(env), groupEnd);
    synchronized (IDLE) {
      ArrayDeque<KeptProcess> idle = IDLE.get(key);
      while (idle != null && !idle.isEmpty()) {
        KeptProcess kept = idle.pollLast();
        if (kept.process.isAlive() && kept.answers.isEmpty()) {
          kept.clearTail();
          return kept;
        }
        kept.kill();  // it died while idle, or said something unasked
      }
    }
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(env);
    return new KeptProcess(key, builder.start(), groupEnd);
  }

  /**
   * After a group that ended cleanly: keeps the process for the next task for `keepMillis`
   * (ends it now when that is not positive).
   */
  void giveBack(long keepMillis) {
    if (keepMillis <= 0) {
      end();
      return;
    }
    synchronized (IDLE) {
      idleSince = System.nanoTime();
      this.keepMillis = keepMillis;
      IDLE.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(this);
      if (reaper == null) {
        reaper = start("sparktorch idle process reaper", KeptProcess::reap);
      }
    }
  }

  /** Kills the process: its group did not end cleanly. */
  void kill() {
    process.destroyForcibly();
  }

  /** Why the command stopped: its exit status and its last stderr lines. */
  String exitReport() throws InterruptedException {
    int status = process.waitFor();
    stderr.join();
    String how = "exited with status " + status
        + (status > 128 ? " (killed by signal " + (status - 128) + ")" : "");
    synchronized (tail) {
      return how + ":\n" + (tail.isEmpty() ? "(nothing on stderr)" : String.join("\n", tail));
    }
  }

  /** Ends an idle process: its input ends, and it exits. */
  private void end() {
    try {
      stdin.close();
    } catch (IOException e) {
      kill();
    }
  }

  private void clearTail() {
    synchronized (tail) {
      tail.clear();
    }
  }

  /** Ends the processes idle for longer than their keep time, every second; never returns. */
  private static void reap() {
    while (true) {
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        return;
      }
      long now = System.nanoTime();
      synchronized (IDLE) {
        for (Iterator<ArrayDeque<KeptProcess>> all = IDLE.values().iterator(); all.hasNext(); ) {
          ArrayDeque<KeptProcess> idle = all.next();
          for (Iterator<KeptProcess> it = idle.iterator(); it.hasNext(); ) {
            KeptProcess kept = it.next();
            if ((now - kept.idleSince) / 1_000_000 >= kept.keepMillis) {
              it.remove();
              kept.end();
            }
          }
          if (idle.isEmpty()) {
            all.remove();
          }
        }
      }
    }
  }

  private void readStdout() {
    byte[] end = groupEnd.getBytes(StandardCharsets.UTF_8);
    ArrayList<byte[]> lines = new ArrayList<>();
    try (InputStream out = process.getInputStream()) {
      byte[] buffer = new byte[1 << 16];
      int kept = 0;  // the start of a line not yet ended, at the buffer's front
      for (int n; (n = out.read(buffer, kept, buffer.length - kept)) >= 0; ) {
        int from = 0;
        for (int i = kept, filled = kept + n; i < filled; i++) {
          if (buffer[i] != '\n') {
            continue;
          }
          if (i - from == end.length && startsWith(buffer, from, end)) {
            flush(lines);
            answers.add(GROUP_ENDED);
          } else {
            lines.add(Arrays.copyOfRange(buffer, from, i));
          }
          from = i + 1;
        }
        flush(lines);
        kept += n - from;
        System.arraycopy(buffer, from, buffer, 0, kept);
        if (kept == buffer.length) {  // a line longer than the buffer
          buffer = Arrays.copyOf(buffer, 2 * buffer.length);
        }
      }
      if (kept > 0) {  // a last line without its newline
        lines.add(Arrays.copyOf(buffer, kept));
        flush(lines);
      }
    } catch (IOException e) {
      // the command was killed
    } finally {
      answers.add(EXITED);
    }
  }

  /** Queues `lines` as one batch, if any, and empties it. */
  private void flush(ArrayList<byte[]> lines) {
    if (!lines.isEmpty()) {
      answers.add(lines.toArray(new byte[0][]));
      lines.clear();
    }
  }

  private static boolean startsWith(byte[] buffer, int from, byte[] prefix) {
    for (int k = 0; k < prefix.length; k++) {
      if (buffer[from + k] != prefix[k]) {
        return false;
      }
    }
    return true;
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
