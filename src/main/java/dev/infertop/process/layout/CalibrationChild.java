package dev.infertop.process.layout;

import java.nio.file.Path;

/**
 * The calibration child's entry point: the only place a target's libggml-base or libllama is loaded and run in
 * production. {@link CalibrationSandbox} starts it as another user, without privileges, with the library open as
 * stdin; it calibrates that file and prints {@link LayoutAnswer}'s text (or, with the argument {@value #BATCH},
 * {@link BatchAnswer}'s for a libllama) on stdout, and nothing else. Everything it prints
 * is untrusted by the reader: the library's constructors and functions run in this process.
 */
public final class CalibrationChild {
    /** The library, as the open file the parent handed over: no path the target could swap. */
    static final Path LIBRARY = Path.of("/proc/self/fd/0");

    /** The argument that makes the child calibrate a libllama's struct llama_batch ({@link BatchProbe}). */
    static final String BATCH = "batch";

    private CalibrationChild() {}

    public static void main(String[] args) {
        String answer;
        int status = 0;
        try {
            answer = args.length == 1 && args[0].equals(BATCH) ? BatchAnswer.write(BatchProbe.calibrate(LIBRARY))
                    : LayoutAnswer.write(LayoutCalibrator.calibrateInThisProcess(LIBRARY, null));
        } catch (CalibrationException e) {
            answer = LayoutAnswer.error(withoutOwnPath(e.getMessage()));
            status = 1;
        } catch (RuntimeException | Error e) {
            answer = LayoutAnswer.error(e.toString());
            status = 1;
        }
        System.out.print(answer);
        System.out.flush();
        // halt: no shutdown hooks or finalization that could still call into the library's code.
        Runtime.getRuntime().halt(status);
    }

    /** "cannot calibrate /proc/self/fd/0: it lacks ggml_init" → "it lacks ggml_init": the parent names the file. */
    static String withoutOwnPath(String message) {
        String prefix = "cannot calibrate " + LIBRARY + ": ";
        return message != null && message.startsWith(prefix) ? message.substring(prefix.length()) : String.valueOf(message);
    }
}
