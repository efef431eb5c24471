package dev.infertop.cli;

import dev.infertop.session.StartTimeline;
import dev.infertop.session.StopTimeline;
import dev.infertop.ffi.NativeLibraryMissing;
import dev.infertop.ffi.OwnPriority;
import dev.infertop.session.FatalErrors;
import dev.infertop.session.UserError;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** Entry point: picocli parses, commands run, and every failure leaves as one line and an exit code. */
public final class Main {
    private Main() {}

    /** Exit code for an unexpected failure (sysexits EX_SOFTWARE), an Error included. */
    static final int EXIT_INTERNAL = FatalErrors.EXIT_STATUS;

    /** Exit code for a system library or symbol infertop needs that is missing (sysexits EX_UNAVAILABLE). */
    static final int EXIT_UNAVAILABLE = 69;

    public static void main(String[] args) {
        StartTimeline.mark("JVM started", System.err);
        // Until the arguments say whether infertop attaches to a running (and maybe busy) engine: see OwnPriority.
        OwnPriority.raiseForStart();
        // Names the target chose reach stdout and stderr in messages and outputs: the last guard before the
        // terminal (the live view draws through its own stream and guards its cells).
        ControlCharacterFilter.install();
        // An Error, or a failure that ends one of infertop's other threads: one line, the run's exit path, 70.
        FatalErrors.install(System.err);
        int status = run(args);
        StopTimeline.mark("exiting", System.err);
        System.exit(FatalErrors.happened() ? FatalErrors.EXIT_STATUS : status);
    }

    /**
     * Runs the command line; its exit status. An Error (picocli passes only Exceptions to its handler) ends as
     * one line too, once the session's finally blocks have detached the probes and restored the terminal.
     */
    public static int run(String... args) {
        try {
            return execute(args);
        } catch (Error e) {
            Optional<NativeLibraryMissing> missing = missingLibraryIn(e); // an ExceptionInInitializerError
            if (missing.isPresent()) {
                System.err.println("infertop: " + missing.get().getMessage());
                return EXIT_UNAVAILABLE;
            }
            return FatalErrors.report(e);
        }
    }

    private static int execute(String... args) {
        CommandLine commandLine = commandLine(args);
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
            Optional<NativeLibraryMissing> missing = missingLibraryIn(exception);
            if (missing.isPresent()) {
                err.println("infertop: " + missing.get().getMessage());
                return EXIT_UNAVAILABLE;
            }
            if (System.getenv("INFERTOP_DEBUG") != null) {
                exception.printStackTrace(err);
            }
            err.println("infertop: internal error: " + exception
                    + " (run with INFERTOP_DEBUG=1 for details, and please report it)");
            return EXIT_INTERNAL;
        });
        commandLine.setExecutionStrategy(parseResult -> {
            if (!attaches(parseResult)) {
                OwnPriority.backToGiven(); // only an attach races the target for the CPU
            }
            return new CommandLine.RunLast().execute(parseResult);
        });
        return commandLine.execute(args);
    }

    /** Whether the parsed command attaches to a running process (-p, --follow): no subcommand, no COMMAND. */
    static boolean attaches(CommandLine.ParseResult parseResult) {
        return !parseResult.hasSubcommand() && !parseResult.isUsageHelpRequested()
                && !parseResult.isVersionHelpRequested()
                && parseResult.commandSpec().userObject() instanceof InfertopCommand command && command.command.isEmpty();
    }

    /** The subcommands, in --help's order; each one's name is its @Command's. */
    private static final List<Class<?>> SUBCOMMANDS = List.of(DemoCommand.class, MachineCommand.class,
            ModelCommand.class, OverheadCommand.class, ReportCommand.class, ReplayCommand.class, DiffCommand.class);

    private static final Set<String> SUBCOMMAND_NAMES = SUBCOMMANDS.stream()
            .map(command -> command.getAnnotation(CommandLine.Command.class).name())
            .collect(Collectors.toUnmodifiableSet());

    /**
     * The command line for {@code args}: the subcommands are added only where the arguments may name one (a
     * first argument that is no option, a subcommand's name before {@code --}) or ask for help or the version.
     * picocli builds each command's model by reflection when it is added: the subcommands' were a noticeable
     * part of every {@code infertop -p PID}'s start, which names none.
     */
    static CommandLine commandLine(String... args) {
        CommandLine commandLine = new CommandLine(new InfertopCommand());
        if (mayNameSubcommand(args)) {
            SUBCOMMANDS.forEach(commandLine::addSubcommand); // picocli makes each and names it as annotated
        }
        return commandLine;
    }

    static boolean mayNameSubcommand(String... args) {
        if (args.length == 0 || !args[0].startsWith("-")) {
            return true;
        }
        for (String arg : args) {
            if (arg.equals("--")) {
                return false; // what follows is the command to launch
            }
            if (SUBCOMMAND_NAMES.contains(arg) || List.of("-h", "--help", "-V", "--version").contains(arg)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The missing library or symbol behind {@code failure}: the bindings find out in a class initialiser (the
     * library's, or the holder of the first function used), so it arrives wrapped in ExceptionInInitializerError.
     */
    static Optional<NativeLibraryMissing> missingLibraryIn(Throwable failure) {
        Throwable cause = failure;
        for (int depth = 0; cause != null && depth < 16; depth++, cause = cause.getCause()) { // a chain may loop
            if (cause instanceof NativeLibraryMissing missing) {
                return Optional.of(missing);
            }
        }
        return Optional.empty();
    }
}
