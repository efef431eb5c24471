package dev.infertop.cli;

import dev.infertop.session.UserError;
import picocli.CommandLine;

import java.io.PrintWriter;

/** Entry point: picocli parses, commands run, and every failure leaves as one line and an exit code. */
public final class Main {
    private Main() {}

    /** Exit code for an unexpected failure (sysexits EX_SOFTWARE). */
    static final int EXIT_INTERNAL = 70;

    public static void main(String[] args) {
        dev.infertop.session.StartTimeline.mark("JVM started", System.err);
        // Names the target chose reach stdout and stderr in messages and outputs: the last guard before the
        // terminal (the live view draws through its own stream and guards its cells).
        ControlCharacterFilter.install();
        System.exit(run(args));
    }

    public static int run(String... args) {
        CommandLine commandLine = new CommandLine(new InfertopCommand());
        commandLine.setParameterExceptionHandler((exception, arguments) -> {
            PrintWriter err = exception.getCommandLine().getErr();
            err.println("infertop: " + exception.getMessage() + " (see infertop --help)");
            return 2;
        });
        commandLine.setExecutionExceptionHandler((exception, cmd, parseResult) -> {
            PrintWriter err = cmd.getErr();
            if (exception instanceof UserError user) {
                err.println("infertop: " + user.getMessage());
                return user.exitCode();
            }
            if (System.getenv("INFERTOP_DEBUG") != null) {
                exception.printStackTrace(err);
            }
            err.println("infertop: internal error: " + exception
                    + " (run with INFERTOP_DEBUG=1 for details, and please report it)");
            return EXIT_INTERNAL;
        });
        return commandLine.execute(args);
    }
}
