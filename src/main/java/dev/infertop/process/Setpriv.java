package dev.infertop.process;

import dev.infertop.ffi.OwnPriority;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * util-linux's setpriv(1): switches uid, gid and groups, then execs the command in place (unlike su or
 * runuser, which fork for their PAM session): the pid infertop's probes are attached to stays the command's.
 * Leaving uid 0 also clears every capability (no SECBIT_KEEP_CAPS is set).
 */
public final class Setpriv {
    private Setpriv() {}

    private static final List<String> PLACES = List.of("/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv",
            "/sbin/setpriv");

    /** Where setpriv is: looked up in fixed system places, never through the target's PATH. */
    public static Optional<Path> find() {
        return PLACES.stream().map(Path::of).filter(Files::isExecutable).findFirst();
    }

    /** The argv that runs what follows it as {@code user}: setpriv --reuid --regid --groups --. */
    public static List<String> prefix(Path setpriv, UserAccount user) {
        return List.of(setpriv.toString(), "--reuid=" + Integer.toUnsignedString(user.uid()),
                "--regid=" + Integer.toUnsignedString(user.gid()),
                "--groups=" + user.groups().stream().map(Integer::toUnsignedString).collect(Collectors.joining(",")),
                "--");
    }

    /**
     * The first of the files that {@code user} cannot use (execute the executables, read the others), checked
     * by the kernel as that user (directory permissions and ACLs included); empty when all are usable.
     */
    public static Optional<Path> firstUnusable(Path setpriv, UserAccount user, List<Path> executables,
                                               List<Path> readable) throws IOException {
        List<String> argv = new ArrayList<>(prefix(setpriv, user));
        argv.addAll(List.of("/bin/sh", "-c",
                "for f; do case $f in x:*) test -x \"${f#x:}\" ;; *) test -r \"${f#r:}\" ;; esac "
                        + "|| { printf '%s' \"${f#?:}\"; exit 1; }; done", "check"));
        executables.forEach(p -> argv.add("x:" + p));
        readable.forEach(p -> argv.add("r:" + p));
        Process check = OwnPriority.start(new ProcessBuilder(argv).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))));
        try {
            String printed = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!check.waitFor(10, TimeUnit.SECONDS)) {
                check.destroyForcibly();
                throw new IOException("checking the files as " + user.name() + " took over 10 s");
            }
            if (check.exitValue() == 0) {
                return Optional.empty();
            }
            if (printed.isEmpty() || printed.contains("\n")) {
                throw new IOException("setpriv cannot run a command as " + user.label() + ": " + printed.strip());
            }
            return Optional.of(Path.of(printed));
        } catch (InterruptedException e) {
            check.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while checking the files as " + user.name());
        }
    }
}
