package dev.infertop.session;

import dev.infertop.agg.DagRecorder;
import dev.infertop.export.DagDotWriter;
import dev.infertop.export.OperatorDag;
import dev.infertop.io.FileAccess;

import java.io.IOException;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Optional;

/** Writes the operator DAG of a session's last decode graph: at exit (--dag FILE) and on the live view's key. */
final class DagExport {
    private DagExport() {}

    /** The file the live view's key writes: infertop-dag-PID-HHMMSS.dot in the working directory. */
    static Path defaultFile(int pid) {
        return Path.of(String.format(Locale.ROOT, "infertop-dag-%d-%s.dot", pid,
                LocalTime.now().format(DateTimeFormatter.ofPattern("HHmmss"))));
    }

    /** Writes it with {@code access}'s mode; the one-line outcome, for the status line or stderr. Never throws. */
    static String write(DagRecorder recorder, Path file, FileAccess access) {
        if (recorder == null) {
            return "no DAG: the operator layer is unavailable for this target";
        }
        Optional<OperatorDag> dag = OperatorDag.ofGraph(recorder.lastDecodeGraph());
        if (dag.isEmpty()) {
            return "no DAG yet: no decode step traced with the operator layer on";
        }
        try {
            DagDotWriter.write(dag.get(), file, access);
        } catch (IOException | RuntimeException e) {
            return "DAG not written: " + e.getMessage();
        }
        return String.format(Locale.ROOT, "DAG written to %s (%d nodes, critical path %.3f ms over %d nodes)",
                file, dag.get().nodes().size(), dag.get().criticalPathNs() / 1e6, dag.get().criticalPath().size());
    }
}
