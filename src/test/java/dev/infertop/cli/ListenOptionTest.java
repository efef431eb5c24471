package dev.infertop.cli;

import dev.infertop.session.ListenOption;
import dev.infertop.session.TraceOptions;
import dev.infertop.session.UserError;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** --listen and --quiet as the command line gives them: one line and exit status 2, never a stack trace. */
class ListenOptionTest {
    private static String[] run(String... args) {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int status = Main.run(args);
            return new String[] {Integer.toString(status), err.toString(StandardCharsets.UTF_8)};
        } finally {
            System.setErr(saved);
        }
    }

    @Test
    void aMalformedAddressIsOneLineAndStatusTwo() {
        String[] result = run("--listen", "localhost", "-p", "1");
        assertEquals("2", result[0]);
        assertEquals("infertop: --listen localhost: no port: give HOST:PORT, e.g. 127.0.0.1:9464, or :9464 for "
                + "loopback\n", result[1]);
        assertEquals("2", run("--listen", ":70000", "-p", "1")[0]);
    }

    @Test
    void quietIsOneOutputChoiceAmongOthers() {
        String[] result = run("--quiet", "--json", "-p", "1");
        assertEquals("2", result[0]);
        assertEquals("infertop: choose one of --batch, --json and --quiet\n", result[1]);
        InfertopCommand command = new InfertopCommand();
        new picocli.CommandLine(command).parseArgs("--quiet", "--listen", ":9464", "-p", "1");
        TraceOptions options = command.toOptions(java.util.Map.of(), null);
        assertEquals(TraceOptions.OutputMode.QUIET, options.output());
        assertEquals(9464, options.listen().port());
    }

    @Test
    void aTakenPortIsAUserErrorWithStatusTwo() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            UserError error = assertThrows(UserError.class,
                    () -> ListenOption.start(ListenOption.parse("127.0.0.1:" + taken.getLocalPort())));
            assertEquals(2, error.exitCode());
            assertEquals("--listen 127.0.0.1:" + taken.getLocalPort() + ": port " + taken.getLocalPort()
                    + " is already taken (ss -ltnp shows by whom): choose another port", error.getMessage());
        }
    }
}
